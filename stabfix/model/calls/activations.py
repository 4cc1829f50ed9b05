"""Activations: which output normalisation a tensor expression has had last.

A loss expects one kind of input: `cross_entropy` raw scores (it applies `log_softmax` itself),
`nll_loss` and `kl_div` log-probabilities, `binary_cross_entropy_with_logits` raw scores (it applies
`sigmoid`), `binary_cross_entropy` probabilities. The part answers what an expression is, as far as
the code shows, with the call that made it:

- "softmax", "log_softmax", "sigmoid": the last thing done to the values was that activation,
  as a function (`F.softmax(x, 1)`, `torch.sigmoid`), a method (`x.softmax(-1)`), a module held
  in a name or on `self` (`self.act = nn.Softmax(dim=1)`; every binding that may hold it must agree,
  and a rebinding that wraps it, `self.net = nn.Sequential(self.net, nn.Sigmoid())`, is followed), the
  last layer of an `nn.Sequential`,
  or the `forward` of a model class of the same file (`return F.softmax(self.fc(x), dim=1)`), or what a
  function of the file returns (`probabilities(model(x))`; a factory's module, `build_model()`; a parameter
  every call of the file passes the same kind for) when the `summaries` part is built: it sets the hooks;
  or the `forward` of a model class of another file of the scan (through `FileModel.project`: that file's
  own `activations` answer, one file away);
- "logits": the values come straight out of a linear layer (`nn.Linear`/`nn.Conv*`/`F.linear`),
  also as the last layer of a `Sequential` or the return of a same-file model's `forward`.

Names are followed through every binding that may hold at a use (those that show an activation
must agree; `if calibrated: out = out.softmax(-1)` makes `out` a softmax output on that path), shape-only
steps (`.view`, `.squeeze(1)`, `[:, -1]`, `.float()`) keep the kind, and anything else gives None:
unknown is never a finding.

Equivalent spellings are the same fact: `exp` of a log-softmax (`torch.exp(F.log_softmax(x))`,
`F.log_softmax(x).exp()`) is a softmax, `log` of a softmax (`torch.log(F.softmax(x))`, `p.log()`) a
log-softmax; likewise `exp` of a log-sigmoid (`torch.exp(F.logsigmoid(x))`, `nn.LogSigmoid`) is a
sigmoid and `log` of a sigmoid a log-sigmoid ("log_sigmoid", a kind no loss family expects). A log-softmax applied to values that were already probabilities
(`F.log_softmax(F.softmax(x))`, `F.log_softmax(model(x))` of a model ending in softmax) says so in `over`:
the scores were normalised twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import node_code

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ForeignDefinition, ProjectQueries

_FUNCTIONS = {
    "torch.softmax": "softmax",
    "torch.nn.functional.softmax": "softmax",
    "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
    "torch.sigmoid": "sigmoid",
    "torch.nn.functional.sigmoid": "sigmoid",
    "torch.special.expit": "sigmoid",
    "torch.nn.functional.logsigmoid": "log_sigmoid",
    "torch.nn.functional.linear": "logits",
}
_METHODS = {"softmax": "softmax", "log_softmax": "log_softmax", "sigmoid": "sigmoid"}
_MODULES = {
    "torch.nn.Softmax": "softmax",
    "torch.nn.LogSoftmax": "log_softmax",
    "torch.nn.Sigmoid": "sigmoid",
    "torch.nn.LogSigmoid": "log_sigmoid",
    "torch.nn.Linear": "logits",
    "torch.nn.LazyLinear": "logits",
    "torch.nn.Bilinear": "logits",
    "torch.nn.Conv1d": "logits",
    "torch.nn.Conv2d": "logits",
    "torch.nn.Conv3d": "logits",
}
# Steps that rearrange or cast values without changing what they are.
_SHAPE_METHODS = frozenset(
    {"view", "reshape", "squeeze", "unsqueeze", "flatten", "contiguous", "permute", "transpose", "float",
     "double", "half", "bfloat16", "to", "cuda", "view_as", "reshape_as", "t"}
)
_SEQUENTIAL = frozenset({"torch.nn.Sequential"})
# `nn.Module` methods that return the module itself (`build()` returning `Net().cuda()`, `train(model.to(device))`)
_SELF_RETURNING_METHODS = frozenset({"cuda", "cpu", "to", "train", "eval", "float", "double", "half", "bfloat16",
                                     "requires_grad_", "to_empty", "apply", "share_memory"})
# wrappers whose call runs the wrapped module's forward and returns what it returns
_FORWARDING_WRAPPERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                  "torch.nn.parallel.DistributedDataParallel", "torch.compile"})
# `exp`/`log` of one activation is another: the same values spelled another way.
_INVERSES = {"exp": {"log_softmax": "softmax", "log_sigmoid": "sigmoid"},
             "log": {"softmax": "log_softmax", "sigmoid": "log_sigmoid"}}
_MAX_DEPTH = 6


@dataclass(frozen=True)
class Activation:
    kind: str  # softmax, log_softmax, sigmoid, log_sigmoid, logits
    made_by: cst.CSTNode  # the activation call, the module construction, or the `return` value
    inline: Optional[cst.Call] = None  # the activation call itself, when the loss argument is it
    source: Optional[cst.BaseExpression] = None  # what the inline activation was applied to
    via: str = ""  # how the code reaches it, for messages: "`probs`", "`Net.forward`"
    shown: str = ""  # the code that made it, when that is in another file (`made_by` is then this file's call)
    # a log-softmax applied to values that were already probabilities ("softmax", "sigmoid"): normalised twice
    over: Optional[str] = None


class Activations:
    """The model part `activations`: ask `of(expr)` after the traversal."""

    def __init__(self, imports: ImportTracker, names: Names, project: Optional["ProjectQueries"] = None) -> None:
        self.imports = imports
        self.names = names
        # what a call of a function of the file returns (set by the `summaries` part when it is built)
        self.call_activation: Optional[Callable[[cst.Call], Optional[str]]] = None
        # what every call of the file passes for a parameter, and what a factory function of the file returns
        # (`train(build_model(), ...)`); both set by the `summaries` part, None: not followed
        self.parameter_values: Optional[Callable[[Binding], Optional[list[cst.BaseExpression]]]] = None
        self.returned_values: Optional[Callable[[cst.Call], Optional[list[cst.BaseExpression]]]] = None
        self.project = project

    def qualify(self, expr: cst.BaseExpression) -> Optional[str]:
        """What a name or attribute chain stands for through the imports, honouring local shadowing."""
        root = expr
        while type(root) is cst.Attribute:
            root = root.value
        if type(root) is cst.Name and root in self.names.uses:
            return self.names.qualify(expr)
        return self.imports.qualify(expr)

    def of(self, expr: cst.BaseExpression) -> Optional[Activation]:
        return self._of(expr, 0)

    # -- expressions ------------------------------------------------------------------------------
    def _of(self, expr: cst.BaseExpression, depth: int) -> Optional[Activation]:
        if depth > _MAX_DEPTH:
            return None
        expr = self._peel_shape(expr)
        if type(expr) is cst.Name:
            return self._of_name(expr, depth)
        if type(expr) is not cst.Call:
            return None
        direct = self._activation_call(expr)
        if direct is not None:
            kind, source = direct
            return Activation(kind, expr, inline=expr, source=source, over=self._over(kind, source, depth))
        inverse = self._inverse_operand(expr)
        if inverse is not None:
            return self._through_inverse(expr, inverse, depth)
        found = self._of_module_call(expr, depth)  # a module's forward first: its message names the class
        if found is None and self.call_activation is not None:
            returned = self.call_activation(expr)  # `probabilities(model(x))`, `self.predict(x)`
            if returned is not None:
                return Activation(returned, expr, via=f"returned by `{_callee_text(expr.func)}()`")
        if found is not None and found.over is None and self._is_log_softmax_module(found.made_by):
            argument = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
            over = self._over("log_softmax", argument, depth)  # `self.log_softmax(F.softmax(h))`
            return Activation(found.kind, found.made_by, via=found.via, over=over) if over else found
        return found

    def _is_log_softmax_module(self, made_by: cst.CSTNode) -> bool:
        """An `nn.LogSoftmax` itself (what a model's `forward` does to its input is another question)."""
        return type(made_by) is cst.Call and self.qualify(made_by.func) == "torch.nn.LogSoftmax"

    def _inverse_operand(self, call: cst.Call) -> Optional[tuple[str, cst.BaseExpression]]:
        """`torch.exp(v)`/`v.exp()` and `torch.log(v)`/`v.log()`: the function and its operand."""
        qualified = self.qualify(call.func)
        if qualified in ("torch.exp", "torch.log") and call.args and call.args[0].keyword is None:
            return qualified[len("torch."):], call.args[0].value
        func = call.func
        if qualified is None and type(func) is cst.Attribute and func.attr.value in ("exp", "log") and not call.args:
            return func.attr.value, func.value
        return None

    def _through_inverse(self, call: cst.Call, inverse: tuple[str, cst.BaseExpression], depth: int) -> Optional[Activation]:
        """`exp` undoes the log of a log-softmax or log-sigmoid (`torch.exp(F.log_softmax(x))` is a softmax,
        `F.logsigmoid(x).exp()` a sigmoid), `log` of a softmax or sigmoid gives their log form; of anything
        else they are another quantity, left alone."""
        function, operand = inverse
        inner = self._of(operand, depth + 1)
        made = _INVERSES[function].get(inner.kind) if inner is not None else None
        return Activation(made, call, via=inner.via) if made is not None and inner is not None else None

    def _over(self, kind: str, source: Optional[cst.BaseExpression], depth: int) -> Optional[str]:
        """What a log-softmax was applied to, when that was already probabilities (softmax, sigmoid)."""
        if kind != "log_softmax" or source is None:
            return None
        inner = self._of(source, depth + 1)
        return inner.kind if inner is not None and inner.kind in ("softmax", "sigmoid") else None

    def _activation_call(self, call: cst.Call) -> Optional[tuple[str, Optional[cst.BaseExpression]]]:
        qualified = self.qualify(call.func)
        if qualified in _FUNCTIONS:
            return _FUNCTIONS[qualified], call.args[0].value if call.args else None
        func = call.func
        if qualified is None and type(func) is cst.Attribute and func.attr.value in _METHODS:
            return _METHODS[func.attr.value], func.value
        return None

    def _of_name(self, name: cst.Name, depth: int) -> Optional[Activation]:
        """The activation every binding that may reach the use shows (bindings the code shows
        nothing about, such as `out = model(x)`, are left out: on the path through the known one,
        the loss gets that kind)."""
        bindings = self.names.reaching(name)
        found = [self._of(b.bound_value, depth + 1) for b in bindings if b.bound_value is not None]
        found += [self._agreed([self._of(v, depth + 1) for v in passed]) for passed in self._passed(bindings)]
        known = [item for item in found if item is not None]
        if not known or len({item.kind for item in known}) != 1:
            return None
        first = known[0]
        over = first.over if all(item.over == first.over for item in known) else None
        return Activation(first.kind, first.made_by, via=first.via or f"`{name.value}`", over=over)

    # -- modules ----------------------------------------------------------------------------------
    def _of_module_call(self, call: cst.Call, depth: int) -> Optional[Activation]:
        """`act(x)`, `self.head(x)`, `model(x)`: what the called module's output is."""
        if type(call.func) is cst.Call:  # `nn.Softmax(dim=1)(x)`
            return self._of_module_value(call.func, depth)
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value  # `net.forward(x)` runs what `net(x)` runs, without the hooks
            if type(func) is cst.Call:  # `Net().forward(x)`
                return self._of_module_value(func, depth)
        if type(func) is cst.Name:
            own = self._self_class(func)
            if own is not None:  # `self(x)` in a method: the class's own forward
                return self._of_own_call(own, func, depth)
        return self._of_held(func, depth)

    def _of_own_call(self, own: cst.ClassDef, receiver: cst.Name, depth: int) -> Optional[Activation]:
        """What calling a method's receiver returns: its class's `forward`, unless the class defines a
        `__call__` of its own (then calling it runs that, not `forward`)."""
        methods = {item.name.value for item in own.body.body if type(item) is cst.FunctionDef}
        if "__call__" in methods:
            return None
        return self.forward_of(own, depth, receiver.value)

    def _of_held(self, func: cst.BaseExpression, depth: int) -> Optional[Activation]:
        """What a module held in a name or on `self` returns: every binding that may hold it must show
        the same kind (`if probs: self.net = nn.Sequential(self.net, nn.Sigmoid())` is not raw logits)."""
        found = [self._of_module_value(value, depth) for value in self._held(func)]
        if not found or any(item is None for item in found) or len({item.kind for item in found}) != 1:  # type: ignore[union-attr]
            return None
        return found[-1]

    def _of_module_value(self, value: cst.BaseExpression, depth: int) -> Optional[Activation]:
        """What calling the module that `value` constructs (or names) returns."""
        if type(value) in (cst.Name, cst.Attribute) and depth < _MAX_DEPTH:
            return self._of_held(value, depth + 1)  # `nn.Sequential(nn.Dropout(p), self.net)`: the earlier `self.net`
        if type(value) is not cst.Call:
            return None
        func = value.func
        if type(func) is cst.Attribute and func.attr.value in _SELF_RETURNING_METHODS and depth < _MAX_DEPTH:
            # a module's own method returns the module (a tensor is never called as a module here)
            return self._of_module_value(func.value, depth + 1)
        qualified = self.qualify(value.func)
        if qualified in _FORWARDING_WRAPPERS and value.args and value.args[0].keyword is None and depth < _MAX_DEPTH:
            return self._of_module_value(value.args[0].value, depth + 1)
        if qualified in _MODULES:
            return Activation(_MODULES[qualified], value)
        if qualified in _SEQUENTIAL:
            layers = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
            return self._of_module_value(layers[-1], depth + 1) if layers else None
        returned = self.returned_values(value) if qualified is None and self.returned_values else None
        if returned:  # `build_model()` of this file: the modules it returns
            return self._agreed([self._of_module_value(item, depth + 1) for item in returned])
        if qualified is None and type(value.func) is cst.Name:
            return self._of_model_class(value.func, depth)
        if qualified is not None and self.project is not None and not qualified.startswith("torch."):
            return self._of_foreign_model(qualified, value)
        return None

    def _of_model_class(self, name: cst.Name, depth: int) -> Optional[Activation]:
        """`Net()` of a class of this file: what every `return` of its `forward` is."""
        bindings = self.names.bindings_of(name)
        classes = [b.node for b in bindings if b.kind == "class"]
        if len(classes) != 1 or len(bindings) != 1:
            return None
        return self.forward_of(classes[0], depth, name.value)

    def forward_of(self, model_class: cst.ClassDef, depth: int = 0, spelled: str = "") -> Optional[Activation]:
        """What every `return` of the class's own `forward` is (a class of this file)."""
        if type(model_class.body) is not cst.IndentedBlock:
            return None
        forward = next(
            (item for item in model_class.body.body if type(item) is cst.FunctionDef and item.name.value == "forward"),
            None,
        )
        returns = self.names.returns.get(forward, []) if forward is not None else []
        if not returns:
            return None
        found = [self._of(value, depth + 1) for value in returns]
        if any(item is None for item in found) or len({item.kind for item in found}) != 1:  # type: ignore[union-attr]
            return None
        overs = {item.over for item in found}  # type: ignore[union-attr]
        over = overs.pop() if len(overs) == 1 else None
        return Activation(found[0].kind, returns[-1], via=f"`{spelled or model_class.name.value}.forward`", over=over)  # type: ignore[union-attr]

    def _of_foreign_model(self, qualified: str, construction: cst.Call) -> Optional[Activation]:
        """`Net()` of a model class of another scanned file: that file's answer about its `forward`."""
        symbol = self.project.resolve(qualified)  # type: ignore[union-attr]
        if symbol is None or symbol.kind != "class":
            return None  # parse another file only for a class of it
        found = self.project.foreign(qualified, _forward_kind, needs=("activations",))  # type: ignore[union-attr]
        if found is None:
            return None
        kind, where, shown = found
        return Activation(kind, construction, via=f"`{where}.forward`", shown=shown)

    def _held(self, func: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The values a called name or `self.<attr>` is bound to (each binding must show one)."""
        if type(func) is cst.Name:
            bindings = self.names.reaching(func)
        elif type(func) is cst.Attribute and type(func.value) is cst.Name:
            owner = self._self_class(func.value)
            bindings = self.names.attribute_reaching(owner, func.attr.value, func.value) if owner is not None else []
        else:
            return []
        values = [b.bound_value for b in bindings if b.kind != "param"] + [v for vs in self._passed(bindings) for v in vs]
        if any(b.kind == "param" for b in bindings) and not self._passed(bindings):
            return []
        return [] if not values or any(v is None for v in values) else values  # type: ignore[return-value]

    def _passed(self, bindings: list[Binding]) -> list[list[cst.BaseExpression]]:
        """For each parameter binding, what every call of its function in the file passes (when all are known)."""
        found = []
        for binding in bindings:
            passed = self.parameter_values(binding) if binding.kind == "param" and self.parameter_values else None
            if passed:
                found.append(passed)
        return found

    @staticmethod
    def _agreed(found: list[Optional[Activation]]) -> Optional[Activation]:
        if not found or any(item is None for item in found) or len({item.kind for item in found}) != 1:  # type: ignore[union-attr]
            return None
        return found[0]

    def _peel_shape(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`out.view(-1, C).float()[:, 0]` -> `out`."""
        while True:
            if type(expr) is cst.Subscript:
                expr = expr.value
            elif (
                type(expr) is cst.Call
                and type(expr.func) is cst.Attribute
                and expr.func.attr.value in _SHAPE_METHODS
                and self.qualify(expr.func) is None  # a method of the value, not `torch.squeeze(...)`
            ):
                expr = expr.func.value
            else:
                return expr

    def _self_class(self, receiver: cst.Name) -> Optional[cst.ClassDef]:
        use = self.names.uses.get(receiver)
        if use is None:
            return None
        scope = use.scope.resolving(receiver.value)
        parent = scope.parent
        if type(scope.node) is not cst.FunctionDef or parent is None or not parent.is_class:
            return None
        params = scope.node.params.params
        if not params or params[0].name.value != receiver.value:
            return None
        return parent.node  # type: ignore[return-value]


def _callee_text(func: cst.BaseExpression) -> str:
    return node_code(func)


def _forward_kind(definition: "ForeignDefinition") -> Optional[tuple[str, str, str]]:
    """Asked of another file's model: (kind, class, code of the return) for its class's `forward`; node-free."""
    if type(definition.node) is not cst.ClassDef or definition.model.activations is None:
        return None
    found = definition.model.activations.forward_of(definition.node)
    if found is None:
        return None
    shown = " ".join(definition.module.code_for_node(found.made_by).split())
    return found.kind, definition.symbol.qualified, shown
