"""Codemods that wrap a value in a library call (`nn.ModuleList([...])`, `nn.Parameter(t)`), spelled the way
the file imports the library.

- `torch_nn_spelling(aliases)`: how the file reaches `torch.nn` (`nn`, `torch.nn`, `th.nn`), and the
  `import` the fix must add when it does not reach it at all.
- `wrapped(value, callee)`: `callee(value)`, keeping the value's own formatting.
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from stabfix.fixes.syntax import parsed_expression


def torch_nn_spelling(aliases: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """(`nn` spelling, modules to import): `import torch.nn as nn` -> ("nn", ()); `import torch as th` ->
    ("th.nn", ()); nothing of torch imported -> ("torch.nn", ("torch",))."""
    for local, qualified in sorted(aliases.items()):
        if qualified == "torch.nn":
            return local, ()
    for local, qualified in sorted(aliases.items()):
        if qualified == "torch":
            return f"{local}.nn", ()
    return "torch.nn", ("torch",)


def wrapped(value: cst.BaseExpression, callee: str) -> cst.Call:
    """`callee(value)`; an empty list display becomes `callee()`."""
    function = parsed_expression(callee)
    if type(value) in (cst.List, cst.Dict) and not value.elements:
        return cst.Call(func=function)
    return cst.Call(func=function, args=[cst.Arg(value=value)])
