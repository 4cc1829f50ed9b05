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

from stabfix.model.calls.events import ParamUpdate
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import children

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
    if type(update.tensor) is cst.Subscript or update.operation.startswith("foreach_"):
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
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in _PARAMETER_METHODS:
            model = dotted_name(func.value)
            return Origin(models=frozenset({model}) if model else frozenset())
        if (dotted_name(func) or "") in _WRAPPERS or names.qualify(func) == "itertools.chain":
            known = [o for o in (_origin(arg.value, chain, names, depth + 1) for arg in expr.args) if o is not None]
            if known:
                return Origin(frozenset().union(*(o.models for o in known)), frozenset().union(*(o.optimizers for o in known)))
        return None
    if type(expr) is cst.Subscript:
        return _param_group_origin(expr, chain, names)
    if type(expr) in (cst.ListComp, cst.GeneratorExp, cst.SetComp):
        comp: Optional[cst.CompFor] = expr.for_in
        while comp is not None:
            origin = _origin(comp.iter, chain, names, depth + 1)
            if origin is not None:
                return origin
            comp = comp.inner_for_in
        return None
    if type(expr) is cst.Name:
        for binding in names.bindings_of(expr):
            value = binding.bound_value
            origin = _origin(value, chain, names, depth + 1) if value is not None else None
            if origin is not None:
                return origin
        # `params = get_trainable_params(model)`: the name says what it holds
        return Origin() if "param" in expr.value.lower() else None
    if type(expr) is cst.Attribute:
        return Origin() if "param" in expr.attr.value.lower() else Origin(held_list=dotted_name(expr))
    return None


def parameters_origin(expr: cst.BaseExpression, names: Names) -> Optional[Origin]:
    """The models a collection of parameters is drawn from (`model.parameters()`, a list of it, a local bound to
    one), None when the code does not show one."""
    return _origin(expr, (), names, 0)


def _collection_origin(tensor: cst.BaseExpression, names: Names) -> Optional[Origin]:
    """Where the tensors of a list or of a dict by name come from: `[p for p in model.parameters()]`,
    `dict(model.named_parameters())`, `{n: p for n, p in model.named_parameters()}`."""
    collection = tensor.value if type(tensor) is cst.Subscript else tensor
    value = names.single_value(collection) if type(collection) is cst.Name else collection
    if type(tensor) is cst.Subscript:
        if type(value) is cst.Call and dotted_name(value.func) == "dict" and len(value.args) == 1:
            value = value.args[0].value
        elif type(value) is cst.DictComp and value.for_in.inner_for_in is None:
            value = value.for_in.iter
        else:
            return None
    return _origin(value if value is not None else collection, (), names, 0)


def owned_attribute(param: str, models: set[str], receivers: frozenset[str] = frozenset()) -> bool:
    """Whether `param` (`model.head.weight`) is an attribute reached from one of `models` (`model`);
    on a bare instance receiver (`receivers`: `instance_receivers`) it takes two steps (`self.head.weight`,
    not a tensor `self.delta`)."""
    return any(
        model and param.startswith(model + ".") and (model not in receivers or param.count(".") >= 2)
        for model in models
    )


def instance_receivers(names: Names, *nodes: Optional[cst.CSTNode]) -> frozenset[str]:
    """The names read in `nodes` that stand for a method's own instance (its first parameter, whatever it is
    called: `self`, `this`), so that spellings made in different methods compare (`self.model`, `model`)."""
    found: set[str] = set()
    stack = [node for node in nodes if node is not None]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value not in found and names.receiver_class(node) is not None:
            found.add(node.value)
        stack.extend(children(node))
    return frozenset(found)


def _param_group_origin(expr: cst.Subscript, chain: tuple[cst.For, ...], names: Names) -> Optional[Origin]:
    """`group["params"]` of `for group in opt.param_groups`, or `opt.param_groups[0]["params"]`."""
    if subscript_key(expr) != "params":
        return None
    group = expr.value
    groups: Optional[cst.BaseExpression]
    if type(group) is cst.Subscript and type(group.value) is cst.Attribute:
        groups = group.value
    elif type(group) is cst.Name:
        groups = next((loop.iter for loop in chain if group.value in target_names(loop.target)), None)
        if type(groups) is cst.Name:
            value = names.single_value(groups)
            groups = value if value is not None else groups
        elif groups is None:  # `group = opt.param_groups[0]`
            value = names.single_value(group)
            groups = value.value if type(value) is cst.Subscript else None
    else:
        return None
    if type(groups) is cst.Attribute and groups.attr.value == "param_groups":
        optimizer = dotted_name(groups.value)
        return Origin(optimizers=frozenset({optimizer}) if optimizer else frozenset())
    return None


def element_source(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> cst.BaseExpression:
    """The iterable that yields `name`: `a` for `for p, q in zip(a, b)` and `p`, `x` for `for i, p in enumerate(x)`."""
    if type(target) not in (cst.Tuple, cst.List) or type(iterable) is not cst.Call:
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
    if params is None or type(params) is cst.Name:
        return set()
    found: set[str] = set()

    def walk(node: cst.CSTNode) -> None:
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _PARAMETER_METHODS:
            found.add(dotted_name(node.func.value) or "")
            return
        for child in children(node):
            walk(child)

    walk(params)
    return found


def shares_parameters(trained: set[str], models: frozenset[str], receivers: frozenset[str] = frozenset()) -> bool:
    """Whether an optimizer built from `trained` models may own parameters of `models` (`receivers`: the names
    of a method's instance in these spellings, `instance_receivers`)."""
    return bool(trained) and "" not in models and any(_overlaps(a, b, receivers) for a in trained for b in models)


def _overlaps(a: str, b: str, receivers: frozenset[str]) -> bool:
    """Whether two model spellings may share parameters (`self.model` is what `__init__` called `model`; the
    instance itself, `self`, holds them all)."""
    for receiver in sorted(receivers):
        a, b = a.removeprefix(receiver + "."), b.removeprefix(receiver + ".")
    if a in receivers or b in receivers:
        return True
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def builds_from(constructor: cst.Call, held: str) -> bool:
    """`AdamW(self.trainable, lr=...)`, `SGD(params=self.trainable)`: the optimizer owns that list's tensors."""
    return any(dotted_name(arg.value) == held for arg in constructor.args)


def reads_param_groups(node: cst.CSTNode, optimizer: str, chain: tuple[cst.For, ...], names: Names, depth: int = 0) -> bool:
    """Whether an expression takes its settings from `optimizer.param_groups` (`lr = opt.param_groups[0]["lr"]`)."""
    if depth > 4:
        return False
    if type(node) is cst.Attribute and node.attr.value == "param_groups" and dotted_name(node.value) == optimizer:
        return True
    if type(node) is cst.Name:
        for loop in chain:
            if node.value in target_names(loop.target):
                return reads_param_groups(loop.iter, optimizer, (), names, depth + 1)
        value = names.single_value(node)
        return value is not None and reads_param_groups(value, optimizer, chain, names, depth + 1)
    return any(reads_param_groups(child, optimizer, chain, names, depth) for child in children(node))


def subscript_key(node: cst.Subscript) -> Optional[str]:
    """`"params"` for `group["params"]`."""
    if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        key = node.slice[0].slice.value
        if type(key) is cst.SimpleString:
            value = key.evaluated_value
            return value if isinstance(value, str) else None
    return None


def target_names(target: cst.CSTNode) -> set[str]:
    """The names an assignment or loop target binds."""
    if type(target) is cst.Name:
        return {target.value}
    if type(target) in (cst.Tuple, cst.List):
        return {name for element in target.elements for name in target_names(element.value)}
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    return set()


def names_in(node: cst.CSTNode) -> set[str]:
    """The variables an expression reads (attribute names excluded)."""
    if type(node) is cst.Name:
        return {node.value}
    if type(node) is cst.Attribute:
        return names_in(node.value)
    return {name for child in children(node) for name in names_in(child)}


# --- parameter-sized allocations ------------------------------------------------------------------------
# `torch.zeros_like(p)`, `torch.empty_like(p)`, `torch.full_like(p, 0.0)`: a buffer shaped like `p`.
_LIKE_FACTORIES = frozenset({"torch.zeros_like", "torch.empty_like", "torch.full_like"})
# `p.new_zeros(p.shape)`, legacy `p.new(p.size()).zero_()`.
_NEW_FACTORIES = frozenset({"new_zeros", "new_empty", "new_full", "new"})
# `torch.zeros(p.shape, device=p.device)`, `torch.zeros(p.size())`, `torch.zeros(*p.shape)`.
_SHAPED_FACTORIES = frozenset({"torch.zeros", "torch.empty", "torch.full"})
# Steps after an allocation that keep its shape (`.zero_()` of `empty_like`, `.float()`, `.to(device)`).
_SHAPE_KEEPING = frozenset({"zero_", "float", "double", "to", "cuda", "cpu", "detach", "requires_grad_", "contiguous"})
_FLAT_PARAMETERS = frozenset({"torch.nn.utils.parameters_to_vector", "torch.nn.utils.convert_parameters.parameters_to_vector"})


@dataclass(frozen=True)
class ParamSized:
    """A fresh buffer the shape of a parameter (`torch.zeros_like(p)` for `p` of `model.parameters()`)."""

    call: cst.Call  # the allocating call
    source: cst.BaseExpression  # the tensor whose shape it takes (`p`, `p.grad`, `flat`)
    origin: Origin  # the models the parameters come from
    on_host: bool  # the code puts it in host memory (`device="cpu"`, `.cpu()`, `.to("cpu")`)
    moved: bool = False  # moved or cast after the allocation (`.to(device)`, `.cuda()`, `.float()`)


def param_sized_allocation(expr: cst.BaseExpression, names: Names) -> Optional[ParamSized]:
    """A zero/empty buffer shaped like a parameter, None otherwise. A copy (`p.clone()`, `p.detach()`) is
    not one: it holds the parameter's values (a snapshot, an EMA shadow), not an empty sum."""
    from stabfix.model.calls.devices import DeviceKinds, is_cpu_expression, method_chain, to_call_target

    qualify = names.qualify
    devices = DeviceKinds(names)  # a device held by a name is the CPU by what is bound to it, not by its name
    current, on_host, moved = expr, False, False
    while type(current) is cst.Call and type(current.func) is cst.Attribute and qualify(current.func) is None:
        method = current.func.attr.value
        if method in _NEW_FACTORIES:
            break
        if method not in _SHAPE_KEEPING:
            return None
        if method == "cpu" or (method == "to" and to_call_target(current, qualify, devices)[0] == "cpu"):
            on_host = True
        moved |= method in ("to", "cuda", "cpu", "float", "double")
        current = current.func.value
    if type(current) is not cst.Call:
        return None
    call = current
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device" and is_cpu_expression(arg.value, qualify, devices):
            on_host = True
    name = qualify(call.func) or ""
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if name in _LIKE_FACTORIES and positional:
        source = positional[0]
    elif type(call.func) is cst.Attribute and call.func.attr.value in _NEW_FACTORIES and not name:
        source = call.func.value
        if not positional or not _shape_of(positional[0], source):
            return None
    elif name in _SHAPED_FACTORIES and call.args:
        first = call.args[0].value
        root, steps = method_chain(first, qualify)
        if not steps or steps[-1][0] not in (".shape", "size"):
            return None
        source = root
    else:
        return None
    origin = parameter_origin(source, names)
    return ParamSized(call, source, origin, on_host, moved) if origin is not None else None


def _shape_of(shape: cst.BaseExpression, tensor: cst.BaseExpression) -> bool:
    """`p.shape` / `p.size()` for `p.new_zeros(...)`: the receiver's own shape."""
    from stabfix.model.calls.devices import method_chain

    root, steps = method_chain(shape)
    return bool(steps) and steps[-1][0] in (".shape", "size") and dotted_name(root) == dotted_name(_strip_views(tensor))


def _strip_views(tensor: cst.BaseExpression) -> cst.BaseExpression:
    """`p` for `p.data`, `p.grad`, `p.detach()`: the parameter a read of its values or gradient names."""
    while True:
        if type(tensor) is cst.Attribute and tensor.attr.value in ("data", "grad"):
            tensor = tensor.value
        elif (
            type(tensor) is cst.Call and type(tensor.func) is cst.Attribute
            and tensor.func.attr.value in ("detach", "float") and not tensor.args
        ):
            tensor = tensor.func.value
        else:
            return tensor


def parameter_origin(tensor: cst.BaseExpression, names: Names, depth: int = 0) -> Optional[Origin]:
    """The models a tensor is a parameter (or a parameter's gradient) of: `p` of `for p in
    model.parameters()` or of a comprehension over them (through `zip`, `enumerate`, a list built from
    them), `flat = parameters_to_vector(model.parameters())`; None when the code does not show one."""
    tensor = _strip_views(tensor)
    if depth > _MAX_DEPTH or type(tensor) is not cst.Name:
        return None
    for binding in names.bindings_of(tensor):
        if binding.kind == "for" and type(binding.node) in (cst.For, cst.CompFor) and binding.value is not None:
            source = element_source(binding.node.target, binding.value, tensor.value)
            if source is binding.value and type(binding.node.target) in (cst.Tuple, cst.List):
                # `for name, p in model.named_parameters()`: the second element is the tensor
                if not (type(source) is cst.Call and type(source.func) is cst.Attribute
                        and source.func.attr.value == "named_parameters"):
                    continue
            origin = _origin(source, (), names, depth + 1)
            if origin is not None:
                return origin
        value = binding.bound_value
        if type(value) is cst.Call and (names.qualify(value.func) or "") in _FLAT_PARAMETERS and value.args:
            return _origin(value.args[0].value, (), names, depth + 1) or Origin()
    return None


# --- what an optimizer was built from ---------------------------------------------------------------------


@dataclass(frozen=True)
class AllParameters:
    """An optimizer handed every parameter of a model (`AdamW(model.parameters())`)."""

    model: cst.BaseExpression  # `self.model`
    trainable_filter: bool  # filtered by `p.requires_grad` only: all of them while nothing is frozen


def all_parameters_of(constructor: cst.Call, names: Names) -> Optional[AllParameters]:
    """The model whose parameters an optimizer constructor receives whole: `model.parameters()`,
    `list(...)` of it, `[{"params": model.parameters(), "lr": ...}]`, a local bound to one of those, or the
    same filtered only by `requires_grad` (`filter(lambda p: p.requires_grad, ...)`, a comprehension with
    `if p.requires_grad`). None when it receives a subset (`[p for n, p in ... if "lora_" in n]`) or
    something the code does not show."""
    params = next((arg.value for arg in constructor.args if arg.keyword and arg.keyword.value == "params"), None)
    if params is None:
        positional = [arg.value for arg in constructor.args if arg.keyword is None and not arg.star]
        params = positional[0] if positional else None
    return _whole(params, names, False, 0) if params is not None else None


def _whole(expr: cst.BaseExpression, names: Names, filtered: bool, depth: int) -> Optional[AllParameters]:
    if depth > _MAX_DEPTH:
        return None
    if type(expr) is cst.Name:
        value = names.single_value(expr)
        return _whole(value, names, filtered, depth + 1) if value is not None else None
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value == "parameters" and not expr.args:
            return AllParameters(func.value, filtered)
        wrapper = dotted_name(func) or ""
        if wrapper in ("list", "tuple", "iter") and len(expr.args) == 1:
            return _whole(expr.args[0].value, names, filtered, depth + 1)
        if wrapper == "filter" and len(expr.args) == 2 and _only_requires_grad(expr.args[0].value):
            return _whole(expr.args[1].value, names, True, depth + 1)
        return None
    if type(expr) in (cst.ListComp, cst.GeneratorExp) and expr.for_in.inner_for_in is None:
        conditions = expr.for_in.ifs
        if not all(_only_requires_grad(condition.test) for condition in conditions):
            return None
        if not (type(expr.elt) is cst.Name and type(expr.for_in.target) is cst.Name and expr.elt.value == expr.for_in.target.value):
            return None
        return _whole(expr.for_in.iter, names, filtered or bool(conditions), depth + 1)
    if type(expr) in (cst.List, cst.Tuple) and len(expr.elements) == 1:
        group = expr.elements[0].value
        if type(group) is cst.Dict:
            for element in group.elements:
                if type(element) is cst.DictElement and type(element.key) is cst.SimpleString and element.key.evaluated_value == "params":
                    return _whole(element.value, names, filtered, depth + 1)
    return None


def _only_requires_grad(node: cst.CSTNode) -> bool:
    """`p.requires_grad`, `lambda p: p.requires_grad`: a test of trainability and nothing else."""
    if type(node) is cst.Lambda:
        node = node.body
    return type(node) is cst.Attribute and node.attr.value == "requires_grad"


_TRAINER_LIBRARIES = ("transformers.", "trl.")


def trainer_parameters(call: cst.Call, names: Names) -> Optional[AllParameters]:
    """A Hugging Face (or TRL) `Trainer(model=m, ...)` with no `optimizers=`: it builds its optimizer
    from every parameter of `m` that requires grad."""
    qualified = names.qualify(call.func) or ""
    if not qualified.startswith(_TRAINER_LIBRARIES) or not qualified.endswith("Trainer"):
        return None
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "optimizers" in keywords or "optimizer_cls_and_kwargs" in keywords or "model" not in keywords:
        return None
    return AllParameters(keywords["model"], True)
