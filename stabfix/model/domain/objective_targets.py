"""Hand-written objectives: which tensors a backward pass compares with a model's output by plain arithmetic.

A loss is not always a call of torch's or of a `*Loss` class: `((model(x) - t) ** 2).mean()` written inline,
or a method of the file that computes a likelihood from its arguments (`self._nll(ratings, p)`,
`loss_object.get_loss(pred, label)`), is one too. The model part `objective_targets` answers, for a scope (an
outermost function or the module) and a set of variable names, whether a value the scope backpropagates
(`x.backward()`) is computed from those variables and from a model's output by arithmetic alone: operators,
reductions and elementwise math (`.mean()`, `torch.log`, `.clamp(...)`), indexing, casts and moves, and calls
of functions of the file whose returned value is itself such arithmetic of their parameters (followed two
calls deep). A variable that reaches the backward pass through anything else (a model, a callable the file
does not show) is not compared by arithmetic, and the answer is no.

`compared(names, scope, calls)`: the call where the objective first combines them (for messages), or None.
`is_data(names, bindings)`: every binding of the names is data handed in or converted, not a fresh factory
tensor (`torch.ones(...)`, `torch.tensor(1.0)`), which is how learnable leaves are made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.flow.gradient_use import names_in
from stabfix.model.flow.history import History
from stabfix.model.source.names import Binding, Names

# Elementwise math, reductions, casts, moves and views: the result is computed from the operand's values
# alone and carries its graph (torch's own meaning of these methods and functions).
ARITHMETIC = frozenset({
    "mean", "sum", "abs", "pow", "sqrt", "rsqrt", "square", "exp", "log", "log1p", "log2", "log10", "clamp",
    "clamp_min", "clamp_max", "clip", "neg", "norm", "mul", "add", "sub", "div", "true_divide", "prod", "sigmoid",
    "tanh", "relu", "lgamma", "digamma", "reciprocal", "maximum", "minimum", "float", "double", "half",
    "bfloat16", "to", "cuda", "cpu", "view", "view_as", "reshape", "reshape_as", "squeeze", "unsqueeze", "flatten",
    "t", "transpose", "permute", "contiguous", "expand", "expand_as", "type_as", "masked_fill", "nansum", "nanmean",
})
# torch functions that combine several tensors into one, keeping their values and graphs
COMBINING = frozenset({"stack", "cat", "concat", "where"})
# torch factories: a tensor made by one of them is a fresh leaf (a weight, a scale), not data
FACTORIES = frozenset({
    "torch.ones", "torch.zeros", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.randint",
    "torch.arange", "torch.linspace", "torch.eye", "torch.ones_like", "torch.zeros_like", "torch.empty_like",
    "torch.full_like", "torch.rand_like", "torch.randn_like", "torch.nn.Parameter",
})
_MAX_DEPTH = 12
_MAX_CALL_DEPTH = 2


@dataclass(frozen=True)
class _Reach:
    marked: bool  # one of the asked names reaches the expression by arithmetic
    model: bool  # a model's output (or a value carrying its graph) reaches it
    site: Optional[cst.Call] = None  # the outermost call of the expression that combines them


_HIDDEN = None  # an asked name reaches the expression through something that is not arithmetic


class ObjectiveTargets:
    def __init__(self, names: Names, history: History) -> None:
        self.names = names
        self.history = history
        self._calls: list[cst.Call] = []  # the asked scope's calls: what fills its lists

    def compared(self, names: set[str], calls: list[cst.Call]) -> Optional[cst.Call]:
        """Among `calls` (a scope's), a backward pass whose differentiated value combines one of `names` with
        a model's output by arithmetic alone: the call that combines them."""
        self._calls = calls
        for call in calls:
            func = call.func
            if not (type(func) is cst.Attribute and func.attr.value == "backward"):
                continue
            reach = self._walk(func.value, frozenset(names), 0, 0)
            if reach is not _HIDDEN and reach.marked and reach.model and reach.site is not None:
                return reach.site
        return None

    def is_data(self, bindings: list[Binding], names: set[str]) -> bool:
        """No binding of `names` is a factory's fresh tensor (a learnable leaf) or a literal."""
        for binding in bindings:
            if binding.name not in names or binding.bound_value is None:
                continue
            if self._fresh(binding.bound_value):
                return False
        return True

    def _fresh(self, value: cst.BaseExpression) -> bool:
        while type(value) is cst.Call and type(value.func) is cst.Attribute and \
                value.func.attr.value in ARITHMETIC | {"requires_grad_", "detach", "clone"}:
            value = value.func.value
        if type(value) is not cst.Call:
            return type(value) in (cst.Integer, cst.Float)
        qualified = self.names.qualify(value.func) or ""
        if qualified in FACTORIES:
            return True
        first = value.args[0].value if value.args and value.args[0].keyword is None else None
        return qualified in ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor") and (
            first is None or type(first) in (cst.Integer, cst.Float, cst.UnaryOperation)
        )

    # -- the walk ----------------------------------------------------------------------------------------
    def _walk(self, expr: cst.BaseExpression, names: frozenset[str], depth: int, calls: int) -> Optional[_Reach]:
        if depth > _MAX_DEPTH:
            return _Reach(False, False)
        if type(expr) is cst.Name:
            return self._name(expr, names, depth, calls)
        if type(expr) in (cst.Integer, cst.Float):
            return _Reach(False, False)
        if type(expr) is cst.BinaryOperation:
            return _join([self._walk(expr.left, names, depth + 1, calls), self._walk(expr.right, names, depth + 1, calls)])
        if type(expr) is cst.UnaryOperation:
            return self._walk(expr.expression, names, depth + 1, calls)
        if type(expr) is cst.Subscript:
            return self._walk(expr.value, names, depth + 1, calls)
        if type(expr) is cst.Call:
            return self._call(expr, names, depth, calls)
        if type(expr) in (cst.ListComp, cst.GeneratorExp):
            return self._walk(expr.elt, names, depth + 1, calls)  # `torch.stack([net(x).sum() for x in xs])`
        return self._opaque(expr, names)

    def _name(self, name: cst.Name, names: frozenset[str], depth: int, calls: int) -> Optional[_Reach]:
        if name.value in names:
            return _Reach(True, False)
        bindings = self.names.reaching(name) if name in self.names.uses else []
        parts = [self._walk(b.bound_value, names, depth + 1, calls) for b in bindings
                 if b.kind == "assign" and b.bound_value is not None]
        joined = _join(parts) if parts else _Reach(False, False)
        if joined is _HIDDEN:
            return _HIDDEN
        model = joined.model or self.history.origin(name) is not None or self._filled_with_outputs(name, depth)
        return _Reach(joined.marked, model, joined.site)

    def _filled_with_outputs(self, name: cst.Name, depth: int) -> bool:
        """A list of the scope that `.append(...)`s a model's output (`probs.append(torch.sigmoid(net(x)))`)."""
        for call in self._calls:
            func = call.func
            if type(func) is cst.Attribute and func.attr.value in ("append", "extend") and \
                    type(func.value) is cst.Name and func.value.value == name.value and call.args:
                reach = self._walk(call.args[0].value, frozenset(), depth + 1, _MAX_CALL_DEPTH)
                if reach is not _HIDDEN and reach.model:
                    return True
        return False

    def pure_call(self, call: cst.Call) -> bool:
        """The call runs a function of the file whose returned value is arithmetic of its parameters."""
        function = self.names.definition_of(call)
        return function is not None and self._pure(function, 0)

    def _call(self, call: cst.Call, names: frozenset[str], depth: int, calls: int) -> Optional[_Reach]:
        func = call.func
        qualified = self.names.qualify(func) or ""
        arguments = [arg.value for arg in call.args]
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in ARITHMETIC | COMBINING:
            return _sited(_join([self._walk(a, names, depth + 1, calls) for a in arguments]), call)
        if type(func) is cst.Attribute and not qualified and func.attr.value in ARITHMETIC:
            parts = [self._walk(func.value, names, depth + 1, calls)]
            parts += [self._walk(a, names, depth + 1, calls) for a in arguments]
            return _sited(_join(parts), call)
        function = self.names.definition_of(call) if calls < _MAX_CALL_DEPTH else None
        if function is not None and self._pure(function, calls):
            return _sited(_join([self._walk(a, names, depth + 1, calls) for a in arguments]), call)
        return self._opaque(call, names)

    def _pure(self, function: cst.FunctionDef, calls: int) -> bool:
        """What the function returns is arithmetic of its parameters (and of values it computes from them)."""
        returns = self.names.returns.get(function, [])
        parameters = frozenset(p.name.value for p in function.params.params if p.name.value != "self")
        if not returns or not parameters:
            return False
        reaches = [self._walk(value, parameters, 0, calls + 1) for value in returns]
        return all(r is not _HIDDEN for r in reaches) and any(r.marked for r in reaches)  # type: ignore[union-attr]

    def _opaque(self, expr: cst.BaseExpression, names: frozenset[str]) -> Optional[_Reach]:
        """Anything else: an asked name inside it is handed to code that is not arithmetic."""
        if _mentions(expr, names):
            return _HIDDEN
        return _Reach(False, self.history.origin(expr) is not None or self._forward(expr))

    def _forward(self, expr: cst.BaseExpression) -> bool:
        """A call of a callable of the user's (`net(x)`, `self.model(x)`; not a library function) on
        arguments: the other side of an objective, whose graph the backward pass trains."""
        return type(expr) is cst.Call and bool(expr.args) and not self.names.qualify(expr.func)


def _join(parts: list[Optional[_Reach]]) -> Optional[_Reach]:
    if any(p is _HIDDEN for p in parts):
        return _HIDDEN
    sites = [p.site for p in parts if p is not None and p.site is not None]  # type: ignore[union-attr]
    return _Reach(any(p.marked for p in parts), any(p.model for p in parts), sites[0] if sites else None)  # type: ignore[union-attr]


def _sited(reach: Optional[_Reach], call: cst.Call) -> Optional[_Reach]:
    if reach is _HIDDEN or not (reach.marked and reach.model):  # type: ignore[union-attr]
        return reach
    return _Reach(True, True, reach.site or call)  # type: ignore[union-attr]


def _mentions(expr: cst.BaseExpression, names: frozenset[str]) -> bool:
    return bool(names_in(expr) & names)
