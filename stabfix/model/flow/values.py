"""Values: what the code shows about the value of an expression.

Static analysis cannot run the code, so a `Value` is a set of facts the code itself shows, each a
piece of evidence ("`False`" means "not shown", not "no"):

- what it is: a tensor, tensor metadata (`.shape`, `.size()`, `.dtype`), plain Python or numpy
  data, a model (module), a data loader or a batch drawn from one;
- where it lives: host memory (moved to the CPU, turned into Python/numpy, drawn from a
  `DataLoader`) or put on an accelerator (`.to(device)`, `.cuda()`, a half-precision cast);
- its autograd state: detached (`.detach()`, `.data`, computed under `no_grad`) or copied
  (`.clone()`), i.e. a snapshot rather than a live part of the graph;
- where it came from: a model's output, a loss or a reduction to one number, parameters or
  gradients of a model (also a tensor handed to an optimizer, `Adam([latent])`: what the program
  trains is a parameter whatever made it), a constant table built by factories, an unknown call.

Names are followed through the binding model (`names.reaching`): the facts of every binding that
may hold at a use are joined. A call of a function or method of the file is what it returns (a returned
parameter is what the call passes for it); a call of a function of another scanned file is what that
file's values say it returns, and a returned part of a parameter (`return batch[0], batch[1]`) is what
the call passes there. A parameter a function of either file hands to an optimizer is trained.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.devices import DeviceKinds, is_cpu_expression, method_chain, to_call_target
from stabfix.model.calls.modules import ARRAY_SHAPE_METHODS, ModuleIndex
from stabfix.model.calls.optimizers import OptimizerTracker, listed_names
from stabfix.model.flow.call_values import CallReturns
from stabfix.model.flow.gradient_use import asks_for_grad
from stabfix.model.flow.value_facts import ReturnedValues, Value, argument_at
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Binding, Names, dotted_name
from stabfix.model.source.origins import passed_argument
from stabfix.model.source.syntax import TUPLES_AND_LISTS, node_code, node_kinds

# node types for `type(node) in ...` (see node_fields.node_kinds)
_NOT_TENSORS = node_kinds(cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                          cst.FormattedString, cst.Dict, cst.DictComp, cst.Set, cst.SetComp)

# What a tensor says about itself (`.shape`, `.size()`: metadata), a cut copy (`.detach()`), Python data
# (`.item()`), a move (`.cpu()`, `.cuda()`): the torch-operation table (`torch_ops`) says which step is which.
METADATA_STEPS = frozenset(
    {f".{name}" for name, op in torch_ops.ATTRIBUTES.items() if op.kind == "metadata"}
    | {name for name, op in torch_ops.METHODS.items() if op.kind == "metadata"}
)
TENSOR_ONLY_METHODS = frozenset({"contiguous", "unsqueeze", "requires_grad_", "softmax", "log_softmax"})
PARAMETER_ITERATORS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "state_dict", "modules", "named_modules",
     "children", "named_children"}
)
PARAMETER_ATTRIBUTES = frozenset({".data", ".grad", ".weight", ".bias"})
# Casts to accelerator precisions: like `.to(device)`, they say the value is headed for the accelerator.
HALF_PRECISION_CASTS = frozenset({"half", "bfloat16"})
# Reductions to one number: `loss.detach().mean()` is a logged number, not a feature tensor.
REDUCTIONS = frozenset({"mean", "sum", "norm", "max", "min", "std", "var", "prod", "amax", "amin"})
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TORCH_FROM_DATA = frozenset({"tensor", "as_tensor", "from_numpy", "Tensor", "LongTensor", "FloatTensor", "asarray"})
TORCH_FACTORIES = frozenset(
    {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "range", "linspace",
     "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
     "randint_like", "tril_indices", "triu_indices"}
)
# Namespaces whose lowercase functions return tensors (`torch.cat`, `F.normalize`).
TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"})
NOT_TENSOR_FUNCTIONS = frozenset(
    {"load", "device", "is_tensor", "is_floating_point", "numel", "no_grad", "inference_mode", "enable_grad",
     "set_grad_enabled", "get_default_dtype", "compile", "jit", "save", "manual_seed", "cuda", "distributed"}
)
NOT_TENSOR_BUILTINS = frozenset(
    {"str", "int", "float", "bool", "len", "list", "tuple", "dict", "set", "sorted", "repr", "round", "hash", "id",
     "type"}
)
# builtins that call the operand's own method (`abs(t)` is `t.__abs__()`): a tensor in, a tensor out
VALUE_KEEPING_BUILTINS = frozenset({"abs"})
FUNCTIONAL_LOSS_SUFFIXES = ("_loss", "cross_entropy", "kl_div", "binary_cross_entropy_with_logits")


class Values(CallReturns):
    """Answers `value_of(expr)` for the expressions of one file, memoised per node."""

    def __init__(self, names: Names, modules: Optional[ModuleIndex] = None, optimizers: Optional[OptimizerTracker] = None,
                 calls: Optional[list[cst.Call]] = None) -> None:
        self.names = names
        self.modules = modules
        self.optimizers = optimizers
        self.calls = calls  # every call of the file (the tree index's): who hands what to a function
        self._memo: dict[int, Value] = {}
        self._trained: Optional[set[int]] = None
        self.devices = DeviceKinds(names)
        # what a function of another scanned file returns (`returned_values` there), by its qualified name;
        # set by the model when the scan has a project (None: unknown)
        self.foreign_returns: Callable[[str], Optional[ReturnedValues]] = lambda qualified: None
        # which positional parameters (index, name) a function of another scanned file hands to an optimizer
        self.foreign_trained: Callable[[str], Optional[tuple[tuple[int, str], ...]]] = lambda qualified: None

    def qualify(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.names.qualify(expr)

    def value_of(self, expr: cst.BaseExpression, depth: int = 0) -> Value:
        key = id(expr)
        cached = self._memo.get(key)
        if cached is None:
            self._memo[key] = Value()  # a binding that refers to itself (`x = x.detach()` in a loop)
            cached = self._memo[key] = self._evaluate(expr, depth)
        return cached

    def binding_value(self, binding: Binding, depth: int = 0) -> Value:
        """What one binding puts in its name."""
        if binding.kind == "for" and binding.value is not None:
            return self._element_of(binding, depth)
        bound = binding.bound_value
        if bound is None and binding.kind == "unpack" and type(binding.value) is cst.Call:
            value = self._returned_by(binding.value, binding.position, depth)
            if value is None:  # a part of what a call returns (`emb, mask = encoder(ids)`): like the call's result
                value = replace(self.value_of(binding.value, depth + 1), not_tensor=False, grouped=False)
        elif bound is None:
            return Value()
        else:
            value = self.value_of(bound, depth + 1)
        if binding.grad_off and (value.tensor or value.call or value.model_output):
            value = replace(value, snapshot=True, detached=True)
        return value

    # -- expressions --------------------------------------------------------------------------------
    def _evaluate(self, expr: cst.BaseExpression, depth: int) -> Value:
        if depth > 8:
            return Value()
        root, steps = method_chain(expr, self.qualify)
        value = self._root(root, depth)
        for name, node in steps:
            value = self._step(value, name, node, depth)
            if value.metadata:
                return value  # `x.shape[1:]`, `x.size(0)`: whatever follows is metadata too
        return value

    def _step(self, value: Value, name: str, node: Optional[cst.BaseExpression], depth: int = 0) -> Value:
        if name in METADATA_STEPS:
            return Value(not_tensor=True, metadata=True)
        op = torch_ops.method(name, node)
        if op is None and type(node) is cst.Call:
            # a method of a class of this file (`self.to_host(x)`, `Steps().run(x)`): what it returns
            returned = self._returned_by(node, (), depth)
            if returned is not None:
                return returned
        if op is not None and op.kind == "python":
            return replace(value, host=True, not_tensor=True, tensor=False, detached=True)
        if op is not None and op.device == "host":
            return replace(value, host=True, placed=False)
        if name == "to" and type(node) is cst.Call:
            target, where = to_call_target(node, self.qualify, self.devices)
            if target == "cpu" or (target == "device" and self._names_cpu_device(where)):
                return replace(value, host=True, placed=False)
            if target == "device":
                return replace(value, host=False, placed=True)
            return value
        if op is not None and op.device == "accelerator":
            return replace(value, host=False, placed=True)
        if name in HALF_PRECISION_CASTS:
            return replace(value, placed=True)
        if op is not None and op.kind in ("cut", "copy") and type(node) is cst.Call:  # `.detach()`, `.clone()`
            return replace(value, tensor=True, not_tensor=False, snapshot=True, detached=value.detached or op.kind == "cut")
        if name == ".data":
            return replace(value, snapshot=True, detached=True, parameter=value.parameter or value.call)
        if name == "requires_grad_" and asks_for_grad(node):
            return replace(value, tensor=True, not_tensor=False, constant=False, snapshot=False, detached=False)
        if name in TENSOR_ONLY_METHODS:
            return replace(value, tensor=True, not_tensor=False)
        if name in PARAMETER_ATTRIBUTES:
            return replace(value, parameter=True)
        if name in REDUCTIONS and type(node) is cst.Call and not node.args:
            return replace(value, reduced=True)
        if name == "[]":  # an element of a list/dict/tuple: whatever was put in it
            return replace(value, not_tensor=False, grouped=False)
        if name.startswith("."):
            return value
        if _names_a_loss(name):
            return replace(value, reduced=True)
        if value.model_output and name in ARRAY_SHAPE_METHODS:
            return replace(value, tensor=True, not_tensor=False)  # `encoder(x).squeeze(0)`: one tensor
        if not value.tensor:
            forward = value.model_output or (type(node) is cst.Call and self._is_forward(node, depth))
            return replace(value, call=True, model_output=forward)
        return value

    def _is_forward(self, call: cst.Call, depth: int) -> bool:
        """A forward pass: a call of a module of the file (`self.teacher(x)`, `encoder(ids)`), or of any
        callable on a tensor placed on the accelerator (`text_encoder(ids.to(device))`)."""
        if self.modules is not None and self.modules.is_module(call.func):
            return True
        callee = dotted_name(call.func) or ""
        if callee.rsplit(".", 1)[-1][:1].isupper():
            return False  # `ModelEMA(model)`, `DDP(model.to(device))`: a class wraps what it is given
        return any(arg.keyword is None and self.value_of(arg.value, depth + 1).placed for arg in call.args)

    def _root(self, root: cst.BaseExpression, depth: int) -> Value:
        root_type = type(root)  # exact types (see node_fields.node_kinds)
        if root_type is cst.Name:
            return self._name(root, depth)
        if root_type in _NOT_TENSORS:
            return Value(not_tensor=True)
        if root_type in TUPLES_AND_LISTS and not root.elements:
            return Value(not_tensor=True)
        if root_type in TUPLES_AND_LISTS:
            if any(type(element) is cst.StarredElement for element in root.elements):
                return Value()
            parts = [self.value_of(element.value, depth + 1) for element in root.elements]
            if any(part.grouped for part in parts):
                # a record of displays (`(site, cls, [(name, t, c)])`) is bookkeeping, not a tensor group
                return Value()
            joined = Value.join(parts)
            return replace(joined, grouped=joined.tensor or joined.call)
        if type(root) is cst.Call:
            return self._call(root, depth)
        if type(root) is cst.BinaryOperation:
            return _combine([self.value_of(root.left, depth + 1), self.value_of(root.right, depth + 1)])
        if type(root) is cst.UnaryOperation:
            return self.value_of(root.expression, depth + 1)
        if type(root) is cst.IfExp:
            return Value.join([self.value_of(root.body, depth + 1), self.value_of(root.orelse, depth + 1)])
        return Value()

    def _name(self, name: cst.Name, depth: int) -> Value:
        if name.value in ("True", "False", "None"):
            return Value(not_tensor=True)
        bindings = self.names.reaching(name)
        if not bindings:
            return Value()
        values = []
        for binding in bindings:
            if binding.kind == "param":
                values.append(Value(tensor=_annotated_tensor(binding.node)))
            elif binding.kind in ("import", "def", "class"):
                values.append(Value(not_tensor=True))
            elif id(binding) in self._trained_bindings():
                values.append(Value(tensor=True, parameter=True))
            else:
                values.append(self.binding_value(binding, depth))
        return Value.join(values)

    def _trained_bindings(self) -> set[int]:
        """The bindings whose tensors an optimizer trains: those of the names it is handed, through one
        list the code builds first (`params = [latent] + noises; Adam(params)`)."""
        if self._trained is None:
            handed = list(self.optimizers.trained) if self.optimizers is not None else []
            bindings = [binding for name in handed for binding in self.names.reaching(name)]
            listed = [name for b in bindings if b.bound_value is not None for name in listed_names(b.bound_value)]
            bindings += [b for name in listed for b in self.names.reaching(name)]
            bindings += self._handed_to_foreign()
            self._trained = {id(binding) for binding in bindings + self._handed_for(bindings)}
        return self._trained

    def _handed_to_foreign(self) -> list[Binding]:
        """What the file hands to a function of another scanned file that passes those parameters to an
        optimizer (`opt = make_opt(w, noise)` with `def make_opt(w, noise): return Adam([w] + noise)` there)."""
        found: list[Binding] = []
        for call in self.calls or ():
            for arg in call.args:  # a loop, not `any` over a generator: every call of the file is asked
                if arg.keyword is None and listed_names(arg.value):
                    break
            else:
                continue
            if self.names.definition_of(call) is not None:
                continue  # a function of this file: `_handed_for` follows it
            qualified = self.qualify(call.func)
            trained = self.foreign_trained(qualified) if qualified and not qualified.startswith("torch.") else None
            for index, parameter in trained or ():
                argument = argument_at(call, index, parameter)
                for name in listed_names(argument) if argument is not None else ():
                    found.extend(self.names.reaching(name))
        return found

    def _handed_for(self, bindings: list[Binding]) -> list[Binding]:
        """A parameter of a function of the file (`def make_opt(w, noise): return Adam([w] + noise)`):
        the bindings of what the file's calls of it pass for it (`make_opt(w, noise)`)."""
        functions = {id(b.scope.node): b.scope.node for b in bindings
                     if b.kind == "param" and type(b.scope.node) is cst.FunctionDef}
        if not functions or self.calls is None:
            return []
        found: list[Binding] = []
        for call in self.calls:
            function = self.names.definition_of(call) or method_of_instance(self.names, call)
            if function is None or id(function) not in functions:
                continue
            for binding in bindings:
                if binding.kind != "param" or binding.scope.node is not function:
                    continue
                argument = passed_argument(function, call, binding.name)
                for name in listed_names(argument) if argument is not None else ():
                    found.extend(self.names.reaching(name))
        return found

    def _element_of(self, binding: Binding, depth: int) -> Value:
        """A `for` target: a batch when the loop draws from a DataLoader, a parameter when it walks
        `model.parameters()`, a row of a tensor (host or not) when it iterates one."""
        iterable = _iterated_part(binding)
        if iterable is None:
            return Value()
        if not binding.position and type(iterable) in (cst.Tuple, cst.List) and iterable.elements and not any(
                type(element) is cst.StarredElement for element in iterable.elements):
            # `for t in (a, b)`: each of the displayed values in turn
            return replace(Value.join([self.value_of(e.value, depth + 1) for e in iterable.elements]), grouped=False)
        if self._is_loader(iterable, depth):
            return Value(host=True, batch=True)
        if _calls_parameter_iterator(iterable):
            return Value(parameter=True)
        source = self.value_of(iterable, depth + 1)
        if source.host:
            return Value(host=True)
        if source.tensor and not source.grouped:
            # a row of a tensor (`for i, row in zip(ids.tolist(), feats.detach())`): a tensor where the
            # tensor lives, with its autograd state and origin
            return replace(source, call=False, batch=False)
        return Value()

    def _is_loader(self, iterable: cst.BaseExpression, depth: int) -> bool:
        if type(iterable) is cst.Call:
            return (self.qualify(iterable.func) or "") in DATA_LOADERS
        if type(iterable) is cst.Name and depth < 8:
            bindings = self.names.reaching(iterable)
            return bool(bindings) and all(
                b.kind == "assign" and b.value is not None and type(b.value) is cst.Call
                and self._is_loader(b.value, depth + 1)
                for b in bindings
            )
        return False

    def _call(self, call: cst.Call, depth: int) -> Value:
        name = self.qualify(call.func) or ""
        if name.startswith(("numpy.", "np.")):
            return Value(host=True, not_tensor=True)
        if not name and type(call.func) is cst.Name and call.func.value in NOT_TENSOR_BUILTINS:
            return Value(not_tensor=True)
        if not name and type(call.func) is cst.Name and call.func.value in VALUE_KEEPING_BUILTINS and len(call.args) == 1:
            return self.value_of(call.args[0].value, depth + 1)  # `abs(t)` runs `t.__abs__()`: a tensor where `t` lives
        if name in ("copy.deepcopy", "copy.copy") and call.args:
            return self.value_of(call.args[0].value, depth + 1)
        if torch_ops.is_wrapper(name) and call.args and call.args[0].keyword is None:
            held = self.value_of(call.args[0].value, depth + 1)  # `Variable(x)` is `x`
            return replace(held, snapshot=False, detached=False) if asks_for_grad(call) else held
        module, _, last = name.rpartition(".")
        if module == "torch" and (last in TORCH_FROM_DATA or last in TORCH_FACTORIES):
            placed = any(arg.keyword is not None and arg.keyword.value == "device"
                         and not self._names_cpu_device(arg.value) for arg in call.args)
            # `torch.zeros(n, requires_grad=True)` is a leaf that autograd records from: not a constant
            return Value(tensor=True, constant=not asks_for_grad(call), placed=placed)
        if module in TENSOR_FUNCTION_MODULES and last[:1].islower() and last not in NOT_TENSOR_FUNCTIONS:
            operands = [self.value_of(element, depth + 1) for arg in call.args if arg.keyword is None
                        for element in _elements(arg.value)]
            merged = _combine(operands) if operands else Value()
            return replace(merged, tensor=True, not_tensor=False, call=False, reduced=_names_a_loss(last),
                           model_output=False)
        returned = self._returned_by(call, (), depth)
        if returned is not None:
            return returned
        return Value(call=True, reduced=_names_a_loss((dotted_name(call.func) or "").rsplit(".", 1)[-1]),
                     model_output=self._is_forward(call, depth))

    def _names_cpu_device(self, expr: Optional[cst.BaseExpression], depth: int = 0) -> bool:
        """`store_device` whose every binding is a CPU device: moving there is a move to the CPU."""
        if expr is None or depth > 4:
            return False
        if is_cpu_expression(expr, self.qualify, self.devices):
            return True  # also through a method's or property's returns: `self._store_device()`
        if type(expr) is cst.Attribute:
            bindings = self.names.self_attribute_bindings(expr)
        elif type(expr) is cst.Name:
            bindings = self.names.reaching(expr)
        else:
            return False
        return bool(bindings) and all(
            b.bound_value is not None and self._names_cpu_device(b.bound_value, depth + 1) for b in bindings
        )


def _combine(values: list[Value]) -> Value:
    """An arithmetic result: a tensor when any operand is; on the host only when every tensor operand is."""
    if not values:
        return Value()
    tensors = [v for v in values if not v.not_tensor]
    joined = Value.join(values)
    return replace(
        joined,
        tensor=any(v.tensor for v in values),
        host=bool(tensors) and all(v.host for v in tensors),
        constant=all(v.constant or v.not_tensor for v in values) and any(v.constant for v in values),
    )


_TENSOR_TYPE = re.compile(r"\b(?:[A-Z][a-z]+)?Tensor\b")


def annotation_mentions_tensor(annotation: Optional[cst.Annotation]) -> bool:
    """`Tensor`, `torch.Tensor`, `Optional[torch.FloatTensor]` - not `TensorDict` or `TensorType`."""
    if annotation is None:
        return False
    return bool(_TENSOR_TYPE.search(node_code(annotation.annotation)))


def _names_a_loss(name: str) -> bool:
    lowered = name.lower()
    return lowered == "loss" or lowered.endswith(FUNCTIONAL_LOSS_SUFFIXES)


def _annotated_tensor(param: cst.CSTNode) -> bool:
    annotation = getattr(param, "annotation", None)
    if annotation is None:
        return False
    text = dotted_name(annotation.annotation) or ""
    return text.rsplit(".", 1)[-1].endswith("Tensor")


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(expr) in (cst.List, cst.Tuple):
        return [element.value for element in expr.elements]
    return [expr]


def _calls_parameter_iterator(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in PARAMETER_ITERATORS:
            return True
        return any(_calls_parameter_iterator(arg.value) for arg in expr.args)
    return False


def _iterated_part(binding: Binding) -> Optional[cst.BaseExpression]:
    """What the loop target's name takes elements of: `out` for `row` in `for i, row in zip(ids, out)`
    or `for j, (i, row) in enumerate(zip(ids, out))`; None for an `enumerate` counter."""
    if binding.value is None:
        return None
    return torch_ops.element_source(binding.value, binding.position)
