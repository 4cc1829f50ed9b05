"""Whether an `if` test asks which torch (or Python) release runs: the fallback of a version check
(`hasattr(torch, "amp")`, `version.parse(torch.__version__) >= ...`, a flag bound to one) is an older release's
path, and the deprecated API there is meant (SF302 through `amp.in_version_fallback`)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.imports import dotted_name
from stabfix.model.source.instances import held_class
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import preorder
from stabfix.model.source.vocabulary import VERSION_TEST

# modules whose every name read in a test asks which release runs
_VERSION_MODULES = frozenset({"packaging", "distutils", "pkg_resources", "importlib", "importlib_metadata"})


def is_version_test(names: Names, test: cst.BaseExpression, depth: int = 0) -> bool:
    """The test asks which torch (or Python) release runs, by what it reads: `torch.__version__`, a
    `packaging`/`importlib.metadata` version, `hasattr(torch..., ...)`, a name or attribute of the file every
    binding of which is such a test; the name of a flag the code does not show (imported from another module,
    a parameter, a config field: `_TORCH_GREATER_EQUAL_2_4`) only breaks the tie."""
    if depth > 3:
        return False
    for node in preorder(test):
        if type(node) is cst.Call and dotted_name(node.func) in ("hasattr", "getattr") and node.args:
            if (names.qualify(node.args[0].value) or "").split(".")[0] == "torch":
                return True  # what torch provides
        if type(node) not in (cst.Name, cst.Attribute):
            continue
        qualified = names.qualify(node)
        if qualified is not None:
            if qualified.endswith("__version__") or qualified.split(".")[0] in _VERSION_MODULES:
                return True
            if VERSION_TEST.search(qualified.rsplit(".", 1)[-1]):
                return True  # another module's flag or helper: its value is not shown here
            continue
        bindings = _shown_bindings(names, node)
        if bindings is None:
            name = dotted_name(node)
            if name is not None and VERSION_TEST.search(name.rsplit(".", 1)[-1]):
                return True  # a parameter, a config field: the value is not shown
        elif any(is_version_test(names, b.bound_value, depth + 1) for b in bindings):  # type: ignore[arg-type]
            return True
    return False

def _shown_bindings(names: Names, node: cst.BaseExpression) -> Optional[list[Binding]]:
    """Every binding that may hold at a read of a name or an instance attribute of a class of the file, each
    with its value; None where one is not shown (a parameter, an unpacking) or the receiver is unknown."""
    if type(node) is cst.Name:
        if node not in names.uses:
            return []  # not a read (an attribute's name, a keyword)
        bindings = names.reaching(node)
    elif type(node) is cst.Attribute and (owner := held_class(names, node.value)) is not None:
        bindings = names.attribute_reaching(owner, node.attr.value, node.value)  # type: ignore[arg-type]
    else:
        return None
    if not bindings or any(b.bound_value is None for b in bindings):
        return None
    return bindings
