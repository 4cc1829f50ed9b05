"""Whether code may differentiate: what a `no_grad` around it could change.

`GradReach(names, values, is_module_call, is_update).first(statements, allowed)` walks statements (not
into nested functions, classes or lambdas: they run later) and returns a short description of the first
thing there that may use autograd, or None:

- a backward pass or an optimizer step (`is_update`, any `.backward(...)`), `torch.autograd.*` and
  `torch.func.*` calls, `torch.enable_grad`/`set_grad_enabled`, asking for grad (`t.requires_grad_()`,
  `requires_grad=True`), a `.grad` read or write, `retain_grad`/`register_hook`;
- a call the file cannot see into: a function that is neither defined in the file (those are followed
  into, a few levels deep) nor a known API that cannot differentiate (torch and `torch.nn` other than
  the namespaces above, numpy, math, Python builtins, logging and progress bars), a call of an object of
  unknown type (`criterion(out, y)`, `self.metric(p, y)`), and a method of an object of unknown type
  (`attack.perturb(model, x, y)`, `env.step(a)`), unless it is a tensor's, a Python container's or a
  logger's method, a torch module's own API (`model.to(d)`), a module call of the file, or one of the
  calls in `allowed` (the forwards of the model being evaluated).
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from stabfix.model.flow.gradient_use import asks_for_grad
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import GRAD_OFF_CONTEXTS, Names
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import visit_readonly

_DIFFERENTIATING_TORCH = ("torch.autograd.", "torch.func.", "torch.optim.", "torch.enable_grad", "torch.set_grad_enabled",
                          "torch.vmap", "torch.utils.checkpoint")
_UNABLE_TO_DIFFERENTIATE = ("torch.", "numpy.", "math.", "statistics.", "random.", "time.", "logging.", "warnings.",
                            "tqdm.", "os.", "json.", "itertools.", "functools.", "collections.", "operator.")
_BUILTINS = frozenset({
    "print", "len", "range", "enumerate", "zip", "sum", "min", "max", "abs", "round", "float", "int", "bool", "str",
    "list", "tuple", "dict", "set", "sorted", "reversed", "isinstance", "getattr", "hasattr", "any", "all", "iter",
    "next", "repr", "format", "type", "divmod", "pow",
})  # not `map`/`filter`: they call the function they are given
_GRAD_METHODS = frozenset({"backward", "retain_grad", "register_hook", "requires_grad_"})
# methods of torch tensors that cannot reach autograd (the differentiating ones are in _GRAD_METHODS)
_TENSOR_METHODS = frozenset({
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "long", "int", "bool", "type", "type_as", "item",
    "tolist", "numpy", "detach", "clone", "contiguous", "view", "view_as", "reshape", "flatten", "squeeze",
    "unsqueeze", "permute", "transpose", "expand", "expand_as", "repeat", "size", "dim", "numel", "argmax",
    "argmin", "max", "min", "sum", "mean", "std", "var", "norm", "abs", "exp", "log", "sqrt", "pow", "clamp",
    "clamp_min", "clamp_max", "softmax", "log_softmax", "sigmoid", "tanh", "relu", "round", "floor", "ceil", "eq",
    "ne", "gt", "ge", "lt", "le", "all", "any", "topk", "sort", "argsort", "gather", "masked_fill", "masked_select",
    "chunk", "split", "add", "sub", "mul", "div", "neg", "sign", "nonzero", "cumsum", "prod", "logsumexp",
    "add_", "sub_", "mul_", "div_", "copy_", "fill_", "zero_", "index_select", "narrow", "unbind", "tile", "isnan",
    "isinf", "isfinite", "nan_to_num", "where", "matmul", "mm", "bmm", "t", "pin_memory", "new_zeros", "new_ones",
    "new_full", "new_tensor", "count_nonzero", "unique", "bincount", "to_dense",
})
# methods of Python containers and strings
_DATA_METHODS = frozenset({
    "append", "extend", "insert", "items", "keys", "values", "get", "pop", "copy", "setdefault", "add", "count",
    "index", "join", "format", "startswith", "endswith", "strip", "replace", "lower", "upper", "split", "sort",
})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "log_dict",
                          "write", "print", "set_description", "set_postfix", "add_scalar", "add_scalars"})
# a torch module's own API (not a forward): moves, mode switches, parameter and state access
_MODULE_METHODS = frozenset({
    "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "parameters", "named_parameters",
    "buffers", "named_buffers", "modules", "named_modules", "children", "named_children", "state_dict",
    "load_state_dict", "zero_grad", "get_submodule", "generate",
})
_DEPTH = 4


class GradReach:
    def __init__(self, names: Names, values, is_module_call: Callable[[cst.BaseExpression], bool],
                 is_update: Callable[[cst.Call], bool]) -> None:
        self.names = names
        self.values = values
        self.is_module_call = is_module_call
        self.is_update = is_update

    def first(self, statements: list[cst.CSTNode], allowed: set[int], receiver: Optional[str] = None) -> Optional[str]:
        """What in `statements` may use autograd first (see the module's doc), or None. `allowed`: ids
        of calls known to be forwards of the model being evaluated, `receiver` its spelling."""
        return self._first(statements, allowed, receiver, depth=0, seen=set())

    def _first(self, statements, allowed, receiver, depth: int, seen: set[int]) -> Optional[str]:
        finder = _Finder(self, allowed, receiver, depth, seen)
        for statement in statements:
            visit_readonly(statement, finder)
            if finder.found is not None:
                return finder.found
        return None

    def call(self, call: cst.Call, allowed, receiver, depth: int, seen: set[int]) -> Optional[str]:
        """Why this call may use autograd, or None."""
        func = call.func
        qualified = self.names.qualify(func) or ""
        method = func.attr.value if type(func) is cst.Attribute else None
        if asks_for_grad(call):
            return f"{_spelled(call)} asks for gradients"
        if self.is_update(call) or method in _GRAD_METHODS and method != "requires_grad_":
            return f"{_spelled(call)} differentiates"
        if qualified.startswith(_DIFFERENTIATING_TORCH) and qualified not in GRAD_OFF_CONTEXTS:
            return f"{_spelled(call)} uses autograd"
        if id(call) in allowed:
            return None
        definition = self.names.definition_of(call)
        if definition is None:
            callee = self.names.callable_of(func)
            definition = callee.node if callee is not None and callee.kind == "function" else None
        if type(definition) is cst.FunctionDef:
            if id(definition) in seen or depth >= _DEPTH:
                return None if id(definition) in seen else f"{_spelled(call)} calls deeper than stabfix follows"
            inner = self._first(list(definition.body.body) if type(definition.body) is cst.IndentedBlock else [],
                                set(), None, depth + 1, seen | {id(definition)})
            return f"{_spelled(call)} runs code where {inner}" if inner else None
        if qualified:
            return None if qualified.startswith(_UNABLE_TO_DIFFERENTIATE) else f"{_spelled(call)} runs code this file cannot see into"
        if type(func) is cst.Name and func.value in _BUILTINS and not self.names.bindings_of(func):
            # `sorted(xs, key=f)`, `max(xs, key=f)` call `f`
            return None if not any(arg.keyword is not None and arg.keyword.value == "key" for arg in call.args) \
                else f"{_spelled(call)} calls the function it is given"
        if self.is_module_call(func):
            return None  # a forward of a torch module of this file
        if method is not None and self._harmless_method(call, func, method, receiver):
            return None
        return f"{_spelled(call)} runs code this file cannot see into"

    def _harmless_method(self, call: cst.Call, func: cst.Attribute, method: str, receiver: Optional[str]) -> bool:
        owner = dotted_name(func.value)
        if receiver is not None and owner is not None and (owner == receiver or owner.startswith(receiver + ".")):
            if method in _MODULE_METHODS:
                return True
        if method in _LOG_METHODS:
            return True
        value = self.values.value_of(func.value) if self.values is not None else None
        if value is None or not (value.tensor or value.model_output or value.batch or value.not_tensor):
            # an object of unknown type: a tensor's or a list's method name says nothing of what it runs
            # (`attack.sum(model, x)`) unless nothing but plain data goes in
            known = method in _TENSOR_METHODS or method in _DATA_METHODS
            return known and not any(type(arg.value) in (cst.Name, cst.Attribute, cst.Call) for arg in call.args)
        return method not in _GRAD_METHODS


def _spelled(call: cst.Call) -> str:
    """The call as a reason names it (printed only for the reason given: most calls are harmless)."""
    return f"`{code_of(call.func, limit=40)}(...)`"


class _Finder(cst.CSTVisitor):
    def __init__(self, reach: GradReach, allowed, receiver, depth: int, seen: set[int]) -> None:
        self.reach, self.allowed, self.receiver, self.depth, self.seen = reach, allowed, receiver, depth, seen
        self.found: Optional[str] = None

    # nested code runs later; after the first finding nothing more is looked at
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        if self.found is None:
            self.found = self.reach.call(node, self.allowed, self.receiver, self.depth, self.seen)
        return self.found is None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.found is None and node.attr.value == "grad" and not (self.reach.names.qualify(node) or "").startswith("torch."):
            self.found = f"`{code_of(node, limit=40)}` reads a gradient"
        return self.found is None
