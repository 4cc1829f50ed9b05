"""Where a tensor that code updates by hand comes from: the parameters of which models or optimizers.

`parameter_loops(update, names)` answers for a `ParamUpdate` event: the `for` loops that enumerate
the updated tensor (`for p in model.parameters()`, `for group in opt.param_groups: for p in
group["params"]`, `for name, p in model.named_parameters()`, a list built from those, `zip(...)`,
`enumerate(...)`, `itertools.chain(...)`), and what they draw from; or, without such loops, one
tensor (`w`, `model.head.weight`) or a collection the update indexes or takes whole (`params[name]`
with `params = dict(model.named_parameters())`, `torch._foreach_add_(params, grads)`). Values are
followed through the `names` model. The helpers below compare that origin with what an optimizer was
built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.events import ParamUpdate
from stabfix.model.imports import dotted_name
from stabfix.model.names import Names

_PARAMETER_METHODS = ("parameters", "named_parameters")
_WRAPPERS = {"list", "tuple", "enumerate", "filter", "sorted", "reversed", "iter", "zip", "chain", "itertools.chain"}
_MAX_DEPTH = 6


@dataclass(frozen=True)
class Origin:
    """What an iteration over parameters draws from: models (`m.parameters()`) or optimizers (param_groups)."""

    models: frozenset[str] = frozenset()  # spellings: `self.model`; "" for a model the code does not name
    optimizers: frozenset[str] = frozenset()
    # a list the code keeps (`self.trainable`): parameters only if the optimizer was built from it
    held_list: Optional[str] = None


@dataclass(frozen=True)
class ParameterLoops:
    """The loops that enumerate an updated tensor, outermost first (empty: no loop yields it)."""

    chain: tuple[cst.For, ...]
    origin: Origin
    listed: bool = False  # a collection indexed or updated whole (`params[name]`, `_foreach_add_(params, ...)`)

    @property
    def single(self) -> bool:
        """One tensor: a variable or an attribute chain (`w`, `model.head.weight`)."""
        return not self.chain and not self.listed


def parameter_loops(update: ParamUpdate, names: Names) -> Optional[ParameterLoops]:
    """The loops that enumerate the updated tensor as parameters, None when they enumerate something
    else; no loops (`chain == ()`) when the update is to a single tensor."""
    loops, param = update.site.loops, update.param
    if isinstance(update.tensor, cst.Subscript) or update.operation.startswith("foreach_"):
        origin = _collection_origin(update.tensor, names) if update.tensor is not None else None
        return ParameterLoops((), origin, listed=True) if origin is not None else None
    index = next((i for i in range(len(loops) - 1, -1, -1) if param in target_names(loops[i].target)), None)
    if index is None:
        return ParameterLoops((), Origin())
    chain = [loops[index]]
    needed = names_in(loops[index].iter)
    for loop in reversed(loops[:index]):
        if target_names(loop.target) & needed:
            chain.insert(0, loop)
            needed |= names_in(loop.iter)
    source = element_source(chain[-1].target, chain[-1].iter, param)
    origin = _origin(source, tuple(chain), names, 0)
    return ParameterLoops(tuple(chain), origin) if origin is not None else None


def _origin(expr: cst.BaseExpression, chain: tuple[cst.For, ...], names: Names, depth: int) -> Optional[Origin]:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETER_METHODS:
            model = dotted_name(func.value)
            return Origin(models=frozenset({model}) if model else frozenset())
        if (dotted_name(func) or "") in _WRAPPERS or names.qualify(func) == "itertools.chain":
            known = [o for o in (_origin(arg.value, chain, names, depth + 1) for arg in expr.args) if o is not None]
            if known:
                return Origin(frozenset().union(*(o.models for o in known)), frozenset().union(*(o.optimizers for o in known)))
        return None
    if isinstance(expr, cst.Subscript):
        return _param_group_origin(expr, chain, names)
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        comp: Optional[cst.CompFor] = expr.for_in
        while comp is not None:
            origin = _origin(comp.iter, chain, names, depth + 1)
            if origin is not None:
                return origin
            comp = comp.inner_for_in
        return None
    if isinstance(expr, cst.Name):
        for binding in names.bindings_of(expr):
            value = binding.bound_value
            origin = _origin(value, chain, names, depth + 1) if value is not None else None
            if origin is not None:
                return origin
        # `params = get_trainable_params(model)`: the name says what it holds
        return Origin() if "param" in expr.value.lower() else None
    if isinstance(expr, cst.Attribute):
        return Origin() if "param" in expr.attr.value.lower() else Origin(held_list=dotted_name(expr))
    return None


def _collection_origin(tensor: cst.BaseExpression, names: Names) -> Optional[Origin]:
    """Where the tensors of a list or of a dict by name come from: `[p for p in model.parameters()]`,
    `dict(model.named_parameters())`, `{n: p for n, p in model.named_parameters()}`."""
    collection = tensor.value if isinstance(tensor, cst.Subscript) else tensor
    value = names.single_value(collection) if isinstance(collection, cst.Name) else collection
    if isinstance(tensor, cst.Subscript):
        if isinstance(value, cst.Call) and dotted_name(value.func) == "dict" and len(value.args) == 1:
            value = value.args[0].value
        elif isinstance(value, cst.DictComp) and value.for_in.inner_for_in is None:
            value = value.for_in.iter
        else:
            return None
    return _origin(value if value is not None else collection, (), names, 0)


def owned_attribute(param: str, models: set[str]) -> bool:
    """Whether `param` (`model.head.weight`) is an attribute reached from one of `models` (`model`);
    on bare `self` it takes two steps (`self.head.weight`, not a tensor `self.delta`)."""
    return any(
        model and param.startswith(model + ".") and (model != "self" or param.count(".") >= 2)
        for model in models
    )


def _param_group_origin(expr: cst.Subscript, chain: tuple[cst.For, ...], names: Names) -> Optional[Origin]:
    """`group["params"]` of `for group in opt.param_groups`, or `opt.param_groups[0]["params"]`."""
    if subscript_key(expr) != "params":
        return None
    group = expr.value
    groups: Optional[cst.BaseExpression]
    if isinstance(group, cst.Subscript) and isinstance(group.value, cst.Attribute):
        groups = group.value
    elif isinstance(group, cst.Name):
        groups = next((loop.iter for loop in chain if group.value in target_names(loop.target)), None)
        if isinstance(groups, cst.Name):
            value = names.single_value(groups)
            groups = value if value is not None else groups
        elif groups is None:  # `group = opt.param_groups[0]`
            value = names.single_value(group)
            groups = value.value if isinstance(value, cst.Subscript) else None
    else:
        return None
    if isinstance(groups, cst.Attribute) and groups.attr.value == "param_groups":
        optimizer = dotted_name(groups.value)
        return Origin(optimizers=frozenset({optimizer}) if optimizer else frozenset())
    return None


def element_source(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> cst.BaseExpression:
    """The iterable that yields `name`: `a` for `for p, q in zip(a, b)` and `p`, `x` for `for i, p in enumerate(x)`."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
        return iterable
    function = dotted_name(iterable.func)
    elements = [element.value for element in target.elements]
    index = next((i for i, element in enumerate(elements) if name in target_names(element)), None)
    positional = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
    if index is None or any(arg.star for arg in iterable.args):
        return iterable
    if function == "zip" and index < len(positional):
        return element_source(elements[index], positional[index], name)
    if function == "enumerate" and index == 1 and positional:
        return element_source(elements[1], positional[0], name)
    return iterable


def models_in(constructor: cst.Call) -> set[str]:
    """Models whose `.parameters()` an optimizer constructor receives (`""` when it gets something else)."""
    params = next((arg.value for arg in constructor.args if arg.keyword and arg.keyword.value == "params"), None)
    if params is None:
        positional = [arg.value for arg in constructor.args if arg.keyword is None]
        params = positional[0] if positional else None
    if params is None or isinstance(params, cst.Name):
        return set()
    found: set[str] = set()

    def walk(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _PARAMETER_METHODS:
            found.add(dotted_name(node.func.value) or "")
            return
        for child in node.children:
            walk(child)

    walk(params)
    return found


def shares_parameters(trained: set[str], models: frozenset[str]) -> bool:
    """Whether an optimizer built from `trained` models may own parameters of `models`."""
    return bool(trained) and "" not in models and any(_overlaps(a, b) for a in trained for b in models)


def _overlaps(a: str, b: str) -> bool:
    """Whether two model spellings may share parameters (`self.model` is what `__init__` called `model`)."""
    a, b = a.removeprefix("self."), b.removeprefix("self.")
    if "self" in (a, b):
        return True
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def builds_from(constructor: cst.Call, held: str) -> bool:
    """`AdamW(self.trainable, lr=...)`, `SGD(params=self.trainable)`: the optimizer owns that list's tensors."""
    return any(dotted_name(arg.value) == held for arg in constructor.args)


def reads_param_groups(node: cst.CSTNode, optimizer: str, chain: tuple[cst.For, ...], names: Names, depth: int = 0) -> bool:
    """Whether an expression takes its settings from `optimizer.param_groups` (`lr = opt.param_groups[0]["lr"]`)."""
    if depth > 4:
        return False
    if isinstance(node, cst.Attribute) and node.attr.value == "param_groups" and dotted_name(node.value) == optimizer:
        return True
    if isinstance(node, cst.Name):
        for loop in chain:
            if node.value in target_names(loop.target):
                return reads_param_groups(loop.iter, optimizer, (), names, depth + 1)
        value = names.single_value(node)
        return value is not None and reads_param_groups(value, optimizer, chain, names, depth + 1)
    return any(reads_param_groups(child, optimizer, chain, names, depth) for child in node.children)


def subscript_key(node: cst.Subscript) -> Optional[str]:
    """`"params"` for `group["params"]`."""
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            value = key.evaluated_value
            return value if isinstance(value, str) else None
    return None


def target_names(target: cst.CSTNode) -> set[str]:
    """The names an assignment or loop target binds."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in target_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def names_in(node: cst.CSTNode) -> set[str]:
    """The variables an expression reads (attribute names excluded)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return names_in(node.value)
    return {name for child in node.children for name in names_in(child)}
