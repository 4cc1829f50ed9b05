"""Which objects are optimizers, what class they are when the file shows it, and which models they train.

An expression is an optimizer when it is
- constructed from a `torch.optim` class, through any import alias (`from torch.optim import AdamW as A`),
  or from a class of another library named like a torch optimizer (`bnb.optim.AdamW8bit`, `Lion`,
  `FusedAdam`, `Adafactor`, `ZeroRedundancyOptimizer`), or from a class of the file that derives from one;
- returned by an optimizer factory (`create_optimizer(...)`, `build_optimizer(...)`);
- a function parameter annotated `torch.optim.Optimizer` (or an optimizer class), or named like an
  optimizer (`optimizer`, `g_optim`; the short `opt` only when it is also used with `.zero_grad()`
  or `.param_groups`), or, whatever its name, both stepped with no argument and cleared with
  `.zero_grad()` (a module clears but does not step; a scheduler steps but does not clear);
- an attribute of `self` bound to one of the above in any method of the class (`self.optimizer =
  optimizer` in `__init__`), or named like an optimizer;
- Lightning's `self.optimizers()` (its class comes from `configure_optimizers` in the same class).

`OptimizerTracker` is the model's `optimizers` part: it collects the facts during the single traversal
of a file, and a checker that declares `needs = ("optimizers",)` asks `resolve(expr, scope)` afterwards.
It also keeps `trained`: the names an optimizer constructor is handed as its tensors
(`Adam([latent] + noises)`, `SGD([{"params": [w, b]}])`, `Adam(params)`), which are the program's
parameters whatever made them (`latent = mean.detach().clone(); latent.requires_grad = True`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import libcst as cst

from stabfix.model.source import vocabulary as words
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.scopes import method_receiver
from stabfix.model.source.syntax import TUPLES_AND_LISTS, node_code
from stabfix.model.source.node_fields import children

# Optimizer classes of torch and of the common libraries around it (bitsandbytes, apex, deepspeed, timm,
# transformers, torch-optimizer, lion-pytorch, schedulefree, ...), matched on the class name itself.
_OPTIMIZER_CLASS = re.compile(
    r"^(Fused|Paged|DeepSpeedCPU|DeepSpeedCPU|CPU|Zero|Distributed|Sparse|Fast|Galore|GaLore|Q|Layerwise)?"
    r"(SGD|Adam|AdamW|Adamax|AdaMax|NAdam|RAdam|AdaBelief|Adagrad|AdaGrad|Adadelta|AdaDelta|Adafactor|"
    r"RMSprop|RMSProp|Rprop|LBFGS|ASGD|Lamb|LAMB|Lars|LARS|Lion|Sophia|SophiaG|Shampoo|Muon|Prodigy|"
    r"Ranger|Ranger21|Novograd|NovoGrad|AdaBound|Yogi|QHAdam|QHM|AdamP|SGDP|MADGRAD|Adan|AdaHessian|"
    r"DAdaptAdam|DAdaptSGD|DAdaptAdaGrad|Lookahead|SAM|ASAM|GSAM|SGDW|AdamWScheduleFree|SGDScheduleFree|"
    r"Adam8bit|AdamW8bit|Lion8bit|SGD8bit|Adam32bit|AdamW32bit|AdEMAMix|SOAP|Apollo|CAME|Tiger)"
    r"(W)?(8bit|32bit)?(ScheduleFree)?$"
)
# Plain names of a class that ends in `Optimizer`, excluding ones known to be something else.
_NOT_TORCH_OPTIMIZERS = {"Optimizer", "BayesianOptimizer", "HyperparameterOptimizer", "LightningOptimizer"}
_TORCH_OPTIM_NOT_OPTIMIZERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.")
_LIGHTNING_OPTIMIZERS = "optimizers"
# Keyword arguments that give plain SGD momentum or weight decay (then it is no longer `p -= lr * grad`).
_SGD_STATEFUL_KEYWORDS = ("momentum", "weight_decay", "dampening", "nesterov")


@lru_cache(maxsize=4096)
def optimizer_class_name(name: str) -> str | None:
    """The short class name when a (qualified or dotted) callee name is an optimizer class, else None."""
    # asked of every call of every file, twice (`events`, `optimizers`), of a few hundred distinct callee names
    if name.startswith(_TORCH_OPTIM_NOT_OPTIMIZERS):
        return None
    last = name.rsplit(".", 1)[-1]
    if _OPTIMIZER_CLASS.match(last):
        return last
    if last.endswith("Optimizer") and last not in _NOT_TORCH_OPTIMIZERS and last[:1].isupper():
        return last
    if name.startswith("torch.optim.") and last[:1].isupper() and last != "Optimizer":
        return last
    return None


def is_optimizer_factory_name(name: str) -> bool:
    return bool(words.OPTIMIZER_FACTORY_NAME.match(name.rsplit(".", 1)[-1]))


def optimizer_name_strength(name: str) -> str | None:
    """'strong' for `optimizer`/`g_optim`-like identifiers, 'weak' for `opt`-like ones, else None."""
    parts = words.identifier_words(name)
    if not parts or any(word in words.NOT_OPTIMIZER_WORDS for word in parts):
        return None
    if any(word in words.OPTIMIZER_WORDS for word in parts):
        return "strong"
    if any(word in words.OPTIMIZER_SHORT_WORDS for word in parts) or name in ("o", "o1", "o2"):
        return "weak"
    return None


def _is_annotation_for_optimizer(annotation: str) -> str | None:
    """'Optimizer' for a generic optimizer annotation, the class name for a specific one, else None."""
    last = annotation.rsplit(".", 1)[-1]
    if last in ("Optimizer", "LightningOptimizer", "OptimizerType"):
        return "Optimizer"
    return optimizer_class_name(annotation)


@dataclass(frozen=True)
class OptimizerInfo:
    """What is known about one optimizer expression."""

    expression: str  # how the user spells it: `self.optimizer`, `opt`
    class_name: str | None  # `AdamW` when the file shows the class, else None
    origin: str  # constructed | returned (by a function of the file) | factory (by its name) | annotated | named | used | lightning
    constructor: cst.Call | None = None

    @property
    def known_plain_sgd(self) -> bool:
        """torch's SGD with no momentum, weight decay or dampening: its step is exactly `p -= lr * grad`."""
        call = self.constructor
        if call is None or self.class_name != "SGD":
            return False
        positional = [arg for arg in call.args if arg.keyword is None]
        if any(arg.star for arg in call.args) or len(positional) > 2:
            return False
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in _SGD_STATEFUL_KEYWORDS and not _is_zero(arg.value):
                return False
        return True

    def describe(self) -> str:
        return self.class_name or "an optimizer"


def _is_zero(node: cst.BaseExpression) -> bool:
    if type(node) in (cst.Integer, cst.Float):
        return float(node.value.replace("_", "")) == 0.0
    return type(node) is cst.Name and node.value in ("False", "None")


@dataclass(frozen=True)
class Scope:
    """Where an expression sits: its enclosing functions (outermost first) and innermost class."""

    functions: tuple[cst.FunctionDef, ...]
    cls: cst.ClassDef | None

    @property
    def function(self) -> cst.FunctionDef | None:
        return self.functions[-1] if self.functions else None

    def on_instance(self, expr: cst.BaseExpression) -> bool:
        """`expr` is the instance of the method this scope is in (`self`, or whatever the method calls it)."""
        return type(expr) is cst.Name and self.cls is not None and expr.value == method_receiver(self.cls, self.functions)


@dataclass
class _Bound:
    value: cst.BaseExpression
    scope: Scope
    position: int | None = None  # index in a tuple target: `g_opt, d_opt = self.optimizers()`


@dataclass
class _Facts:
    names: dict[cst.FunctionDef | None, dict[str, list[_Bound]]] = field(default_factory=dict)
    parameters: dict[cst.FunctionDef, dict[str, cst.BaseExpression | None]] = field(default_factory=dict)
    self_attributes: dict[cst.ClassDef, dict[str, list[_Bound]]] = field(default_factory=dict)
    configured: dict[cst.ClassDef, list[_Bound]] = field(default_factory=dict)
    usage: dict[str, set[str]] = field(default_factory=dict)
    local_optimizer_classes: set[str] = field(default_factory=set)
    # what each function outside a class returns, by its `def` (two functions of one name in different scopes are two)
    returns: dict[cst.FunctionDef, list[_Bound]] = field(default_factory=dict)


_USAGE_METHODS = {"step", "zero_grad", "state_dict", "load_state_dict", "add_param_group"}


class OptimizerTracker(cst.BatchableCSTVisitor):
    """Collects, in the main traversal, what makes an expression an optimizer; `resolve` answers later."""

    def __init__(self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Names) -> None:
        super().__init__()
        self.imports = imports
        self.enclosing = enclosing
        self.names = names  # which `def` a call runs: the one its scope binds (`Names.definition_of`)
        self.facts = _Facts()
        self.trained: list[cst.Name] = []  # names handed to an optimizer constructor as the tensors to train
        # what a name's bindings hold, remembered until the traversal records another fact (or an import,
        # which `qualify` reads): a script rebinds `optimizer` in every cell, and every question about one
        # re-read all of them
        self._facts_version = 0
        self._from_bindings_seen: dict[tuple[int, int], OptimizerInfo | None] = {}
        self._seen_version = 0

    # --- traversal -------------------------------------------------------------------------------
    def scope(self) -> Scope:
        """The current position's scope, to hand back to `resolve` after the traversal."""
        return Scope(self.enclosing.enclosing_functions(), self.enclosing.innermost_class())

    def visit_Import(self, node: cst.Import) -> None:
        self._facts_version += 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._facts_version += 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._facts_version += 1
        for base in node.bases:
            name = self.imports.qualify(base.value) or dotted_name(base.value) or ""
            if _is_annotation_for_optimizer(name):
                self.facts.local_optimizer_classes.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._facts_version += 1
        params = node.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        self.facts.parameters[node] = {
            param.name.value: (param.annotation.annotation if param.annotation else None) for param in every
        }

    def visit_Assign(self, node: cst.Assign) -> None:
        self._facts_version += 1
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._facts_version += 1
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        self._facts_version += 1
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _USAGE_METHODS:
            receiver = dotted_name(func.value)
            if receiver is not None:
                used = self.facts.usage.setdefault(receiver, set())
                used.add(func.attr.value)
                if func.attr.value == "step" and not node.args:
                    used.add("step()")  # a scheduler steps with no argument too; an environment steps with an action
        if optimizer_class_name(self.imports.qualify(func) or dotted_name(func) or "") is not None:
            params = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "params"), None)
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if params is not None or positional:
                self.trained.extend(listed_names(params if params is not None else positional[0]))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._facts_version += 1
        if node.attr.value == "param_groups":
            receiver = dotted_name(node.value)
            if receiver is not None:
                self.facts.usage.setdefault(receiver, set()).add("param_groups")

    def visit_Return(self, node: cst.Return) -> None:
        self._facts_version += 1
        function, cls = self.enclosing.innermost_function(), self.enclosing.innermost_class()
        if node.value is not None and function is not None and cls is None:
            self.facts.returns.setdefault(function, []).append(_Bound(node.value, self.scope()))
        if node.value is None or function is None or function.name.value != "configure_optimizers":
            return
        if cls is not None:
            self.facts.configured.setdefault(cls, []).append(_Bound(node.value, self.scope()))

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        scope = self.scope()
        if type(target) in TUPLES_AND_LISTS:
            for index, element in enumerate(target.elements):
                if type(element) is cst.Element:
                    self._bind_one(element.value, _Bound(value, scope, index))
            return
        self._bind_one(target, _Bound(value, scope))

    def _bind_one(self, target: cst.BaseExpression, bound: _Bound) -> None:
        if type(target) is cst.Name:
            self.facts.names.setdefault(bound.scope.function, {}).setdefault(target.value, []).append(bound)
        elif type(target) is cst.Attribute and bound.scope.on_instance(target.value):
            self.facts.self_attributes.setdefault(bound.scope.cls, {}).setdefault(target.attr.value, []).append(bound)

    # --- questions -------------------------------------------------------------------------------
    def resolve(self, expr: cst.BaseExpression, scope: Scope) -> OptimizerInfo | None:
        """An OptimizerInfo when `expr` (as written at `scope`) is an optimizer, else None."""
        spelled = dotted_name(expr) or _code(expr)
        info = self._resolve(expr, scope, depth=0)
        if info is None:
            return None
        return OptimizerInfo(spelled, info.class_name, info.origin, info.constructor)

    def optimizer_of_value(self, value: cst.BaseExpression, scope: Scope) -> OptimizerInfo | None:
        """An OptimizerInfo when a bound value (right-hand side) produces an optimizer."""
        return self._from_value(_Bound(value, scope), depth=0)

    def _resolve(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> OptimizerInfo | None:
        if depth > 8:
            return None
        if type(expr) is cst.Name:
            return self._resolve_name(expr.value, scope, depth)
        if type(expr) is cst.Attribute:
            if scope.on_instance(expr.value):
                for bound in self.facts.self_attributes.get(scope.cls, {}).get(expr.attr.value, []):
                    info = self._from_value(bound, depth + 1)
                    if info is not None:
                        return info
            return self._by_name(expr.attr.value, dotted_name(expr))
        if type(expr) is cst.Subscript:
            base = expr.value
            if _is_lightning_optimizers_call(base, scope):
                return self._lightning(scope, _subscript_index(expr))
            name = dotted_name(base)
            if name is not None and name.rsplit(".", 1)[-1].lower() in ("optimizers", "optims", "opts"):
                return OptimizerInfo(name, None, "named")
            return None
        if type(expr) is cst.Call:
            return self._from_value(_Bound(expr, scope), depth + 1)
        return None

    def _resolve_name(self, name: str, scope: Scope, depth: int) -> OptimizerInfo | None:
        for function in reversed(scope.functions):
            bindings = self.facts.names.get(function, {}).get(name)
            if bindings:
                return self._from_bindings(bindings, depth) or self._by_name(name, name)
            parameters = self.facts.parameters.get(function, {})
            if name in parameters:
                annotation = parameters[name]
                if annotation is not None:
                    info = self._from_annotation(annotation)
                    if info is not None:
                        return info
                return self._by_name(name, name)
        bindings = self.facts.names.get(None, {}).get(name)
        if bindings:
            return self._from_bindings(bindings, depth) or self._by_name(name, name)
        return self._by_name(name, name)

    def _from_bindings(self, bindings: list[_Bound], depth: int) -> OptimizerInfo | None:
        if self._seen_version != self._facts_version:
            self._from_bindings_seen.clear()
            self._seen_version = self._facts_version
        key = (id(bindings), depth)  # the facts' own lists, alive as long as the tracker
        if key not in self._from_bindings_seen:
            self._from_bindings_seen[key] = self._from_bindings_now(bindings, depth)
        return self._from_bindings_seen[key]

    def _from_bindings_now(self, bindings: list[_Bound], depth: int) -> OptimizerInfo | None:
        found = [info for info in (self._from_value(bound, depth + 1) for bound in bindings) if info is not None]
        if not found:
            return None
        classes = {info.class_name for info in found}
        if len(classes) == 1:
            return found[0]
        # Re-bound to optimizers of different classes (or a wrapper): an optimizer, class unknown.
        return OptimizerInfo(found[0].expression, None, found[0].origin)

    def _from_value(self, bound: _Bound, depth: int) -> OptimizerInfo | None:
        value = bound.value
        if bound.position is not None:
            if type(value) in TUPLES_AND_LISTS:
                elements = [e for e in value.elements if type(e) is cst.Element]
                if bound.position < len(elements) and len(elements) == len(value.elements):
                    return self._from_value(_Bound(elements[bound.position].value, bound.scope), depth + 1)
                return None
            if _is_lightning_optimizers_call(value, bound.scope):
                return self._lightning(bound.scope, bound.position)
            return None
        if type(value) in (cst.Name, cst.Attribute, cst.Subscript):
            return self._resolve(value, bound.scope, depth + 1)
        if type(value) is not cst.Call:
            return None
        if _is_lightning_optimizers_call(value, bound.scope):
            return self._lightning(bound.scope, None)
        func = value.func
        name = self.imports.qualify(func) or dotted_name(func)
        if name is None:
            return None
        class_name = optimizer_class_name(name)
        if class_name is None and type(func) is cst.Name and func.value in self.facts.local_optimizer_classes:
            class_name = func.value
        if class_name is None and type(func) is cst.Name:
            # `optimizer_cls = torch.optim.AdamW` ... `optimizer_cls(params)`
            referenced = self._class_reference(func.value, bound.scope)
            if referenced is not None:
                return OptimizerInfo(name, referenced or None, "constructed", value if referenced else None)
        if class_name is not None:
            return OptimizerInfo(name, class_name, "constructed", value)
        built = self._returned_optimizer(value, depth)  # `u = setup(net)`, `def setup(...): return torch.optim.AdamW(...)`
        if built is not None:
            return OptimizerInfo(name, built.class_name, "returned")  # its construction is in the helper's body
        if is_optimizer_factory_name(name):  # tie-break: a factory whose body the file does not show
            return OptimizerInfo(name, None, "factory")
        return None

    def _returned_optimizer(self, call: cst.Call, depth: int) -> OptimizerInfo | None:
        """What the function of the file (outside a class) a call runs returns, when some `return` of it is an
        optimizer: the `def` the call's scope binds, not every function of that name."""
        if type(call.func) is not cst.Name or depth > 6:
            return None
        function = self.names.definition_of(call) if call.func in self.names.uses else None
        returned = self.facts.returns.get(function, []) if function is not None else []
        return self._from_bindings_now(returned, depth + 1) if returned else None

    def _class_reference(self, name: str, scope: Scope) -> str | None:
        """'' for a name bound to some optimizer class, its class name when known; None otherwise."""
        chains = [self.facts.names.get(function, {}).get(name) for function in reversed(scope.functions)]
        chains.append(self.facts.names.get(None, {}).get(name))
        bindings = next((chain for chain in chains if chain), None)
        if not bindings or len(bindings) != 1:
            return None
        value = bindings[0].value
        if type(value) is cst.Call:  # getattr(torch.optim, cfg.name)
            func = self.imports.qualify(value.func) or dotted_name(value.func)
            if func == "getattr" and value.args:
                module = self.imports.qualify(value.args[0].value) or dotted_name(value.args[0].value) or ""
                return "" if module.endswith("optim") else None
            return None
        qualified = self.imports.qualify(value) or dotted_name(value)
        if qualified is None:
            return None
        return optimizer_class_name(qualified)

    def _from_annotation(self, annotation: cst.BaseExpression) -> OptimizerInfo | None:
        for part in _annotation_names(annotation):
            qualified = self.imports.qualify(cst.parse_expression(part)) if _is_dotted(part) else None
            kind = _is_annotation_for_optimizer(qualified or part)
            if kind is not None:
                return OptimizerInfo(part, None if kind == "Optimizer" else kind, "annotated")
        return None

    def _by_name(self, identifier: str, spelled: str | None) -> OptimizerInfo | None:
        strength = optimizer_name_strength(identifier)
        used = self.facts.usage.get(spelled, set()) if spelled is not None else set()
        # stepped with no argument and cleared or read for its parameter groups, like an optimizer, whatever its
        # name (a scheduler also steps and has a `state_dict`, so neither alone is evidence)
        if strength is None and spelled is not None and "step()" in used and used & {"zero_grad", "param_groups", "add_param_group"} \
                and not any(word in words.NOT_OPTIMIZER_WORDS for word in words.identifier_words(identifier)):
            return OptimizerInfo(spelled, None, "used")  # stepped and cleared like an optimizer, whatever its name
        if strength is None or spelled is None:
            return None
        if "step" not in used and not used & {"zero_grad", "param_groups", "state_dict", "load_state_dict"}:
            return None
        if strength == "weak" and not used & {"zero_grad", "param_groups", "add_param_group"}:
            return None
        return OptimizerInfo(spelled, None, "named")

    def _lightning(self, scope: Scope, position: int | None) -> OptimizerInfo:
        found: list[OptimizerInfo] = []
        if scope.cls is not None:
            for bound in self.facts.configured.get(scope.cls, []):
                found.extend(self._configured_optimizers(bound))
        if position is None and len(found) == 1:
            chosen = found[0]
        elif position is not None and position < len(found):
            chosen = found[position]
        else:
            return OptimizerInfo("self.optimizers()", None, "lightning")
        return OptimizerInfo("self.optimizers()", chosen.class_name, "lightning", chosen.constructor)

    def _configured_optimizers(self, bound: _Bound) -> list[OptimizerInfo]:
        """Optimizers in a `configure_optimizers` return value, in order (lists, tuples, dicts)."""
        value = bound.value
        if type(value) in TUPLES_AND_LISTS:
            elements = [e.value for e in value.elements if type(e) is cst.Element]
            # `return [opt_g, opt_d], [sched_g, sched_d]`: the first list holds the optimizers.
            if elements and type(elements[0]) in TUPLES_AND_LISTS:
                return self._configured_optimizers(_Bound(elements[0], bound.scope))
            found = []
            for element in elements:
                found.extend(self._configured_optimizers(_Bound(element, bound.scope)))
            return found
        if type(value) is cst.Dict:
            for element in value.elements:
                if (
                    type(element) is cst.DictElement
                    and type(element.key) is cst.SimpleString
                    and element.key.evaluated_value == "optimizer"
                ):
                    return self._configured_optimizers(_Bound(element.value, bound.scope))
            return []
        info = self._from_value(bound, depth=1)
        return [info] if info is not None else []


def listed_names(params: cst.BaseExpression) -> list[cst.Name]:
    """The names among an optimizer's params: `z`, `[z, w]`, `[z] + noises`, `[{"params": [z], "lr": 0.1}]`
    (not `model.parameters()`: a module's parameters are known as such already)."""
    if type(params) is cst.Name:
        return [params]
    if type(params) in TUPLES_AND_LISTS:
        return [name for element in params.elements for name in listed_names(element.value)]
    if type(params) is cst.BinaryOperation and type(params.operator) is cst.Add:
        return listed_names(params.left) + listed_names(params.right)
    if type(params) is cst.Dict:
        return [
            name for element in params.elements if type(element) is cst.DictElement
            and type(element.key) is cst.SimpleString and element.key.evaluated_value == "params"
            for name in listed_names(element.value)
        ]
    return []


def _is_lightning_optimizers_call(node: cst.BaseExpression, scope: Scope) -> bool:
    """`self.optimizers()` of a LightningModule's method (whatever the method calls its instance)."""
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value == _LIGHTNING_OPTIMIZERS
        and scope.on_instance(node.func.value)
    )


def _subscript_index(node: cst.Subscript) -> int | None:
    if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        value = node.slice[0].slice.value
        if type(value) is cst.Integer:
            return int(value.value)
    return None


def _annotation_names(annotation: cst.BaseExpression) -> list[str]:
    """Dotted names inside an annotation: `Optional[torch.optim.Optimizer]`, `Optimizer | None`, "Optimizer"."""
    if type(annotation) is cst.SimpleString:
        text = annotation.evaluated_value
        return [text] if isinstance(text, str) and _is_dotted(text) else []
    name = dotted_name(annotation)
    if name is not None:
        return [name]
    found: list[str] = []
    for child in children(annotation):
        if isinstance(child, cst.BaseExpression):
            found.extend(_annotation_names(child))
        else:
            for grandchild in children(child):
                if isinstance(grandchild, cst.BaseExpression):
                    found.extend(_annotation_names(grandchild))
                elif type(grandchild) is cst.Index:
                    found.extend(_annotation_names(grandchild.value))
    return found


def _is_dotted(text: str) -> bool:
    return bool(re.match(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$", text))


def _code(node: cst.CSTNode) -> str:
    return node_code(node)


def learning_rate_argument(call: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The learning rate an optimizer construction is given: `lr=` / `learning_rate=`, or the second
    positional argument (torch optimizers take `params, lr`)."""
    args = call.args if type(call) is cst.Call else ()
    keyword = [a.value for a in args if a.keyword is not None and a.keyword.value in ("lr", "learning_rate")]
    positional = [a.value for a in args if a.keyword is None and not a.star]
    return keyword[0] if keyword else (positional[1] if len(positional) > 1 else None)
