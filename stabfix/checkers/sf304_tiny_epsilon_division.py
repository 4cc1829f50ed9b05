"""SF304 tiny-epsilon-division: dividing by `rms + 1e-8` (or `sqrt(var + 1e-8)`, `* rsqrt(var + 1e-10)`).

A query over `names`, the `numerics` helpers and `calls/quotient_uses.py` (a use that bounds the
quotient): a division whose divisor is a magnitude statistic (std, RMS, norm, variance...) plus a constant
smaller than fp16's smallest subnormal (2**-24 ~ 6e-8, so fp16 rounds it to 0 and the guard is gone). Reported when the quotient is unbounded as the statistic nears
zero: scale matching (`target_rms / (output_rms + 1e-8)`, `1 / (std + eps)`) or a tensor scaled by the size
of an unrelated one. A tensor divided by its own size (`(x - m) / (x.std() + 1e-8)`, RMSNorm) stays bounded
in float32; it is reported only where it runs in float16 (an fp16 autocast region, a `.half()` tensor).
Fix (unsafe): `stat.clamp_min(torch.finfo(t.dtype).eps)` (`** 0.5` for a root statistic), nn.RMSNorm's floor;
an epsilon the user named (a parameter, `self.eps`, a constant) is kept: `clamp_min(max(eps, <floor>))`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.amp import torch_spelling
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.calls.numeric_guards import (
    GuardedDivisor, autocast_dtype, centred, exceeds, float32_under_autocast, guarded_divisor, made_full_precision,
    made_half, roots, scale_like,
)
from stabfix.model.calls.numerics import DIVISION_METHODS, division_operands, is_tiny_epsilon
from stabfix.model.calls.quotient_uses import QuotientUses
from stabfix.model.source.syntax import code_of, walk
from stabfix.shape_queries import Shape, import_aliases, may_fold_to


@dataclass
class _Site:
    node: cst.CSTNode  # the division (or `*= rsqrt(...)`) reported
    numerator: cst.BaseExpression
    divisor: cst.BaseExpression
    root: str  # "sqrt": a division; "rsqrt": a multiplication by an inverse root
    contexts: tuple[cst.BaseExpression, ...]  # enclosing `with` items and function decorators
    tests: tuple[cst.BaseExpression, ...]  # tests of the `if` bodies it sits in


class TinyEpsilonDivision(Checker):
    code = "SF304"
    # a tiny epsilon is written in the file (names are resolved within it): 1e-8, 1e-09, 1e-10 ... 1e-38
    tokens = ("e-8", "e-9", "e-08", "e-09", "e-1", "e-2", "e-3", "E-8", "E-9", "E-1", "E-2")
    also_needs = (("std", "var", "norm", "sqrt", "rms", "abs", "pow", "**", "square"),)
    # ... as a number (not `size-1`): `1e-8`, `1/1e8`, `10 ** -8`, `0.1 ** 8`, `0.00000001`, `1 / 100000000`
    pattern = r"\d[eE][-+]?\d|\*\*\s*\(?\s*-|\.\d*\s*\*\*|\.0{6}|\d{8}"
    needs = ("names",)  # and `tree` (always): its calls and parents, for `QuotientUses`

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a division (or product with a call) by `statistic + eps`, eps folding in this file to below fp16's subnormal
        adds = [node for node in shape.nodes(ast.BinOp) if type(node.op) is ast.Add]
        return any(may_fold_to(shape, side, is_tiny_epsilon) for add in adds for side in (add.left, add.right)) and _divides(shape)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.sites: list[_Site] = []
        self.contexts: list[tuple[cst.BaseExpression, ...]] = []
        self.tests: list[cst.BaseExpression] = []

    # --- where autocast may be on -------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        self.contexts.append(tuple(item.item for item in node.items))

    def leave_With(self, original_node: cst.With) -> None:
        self.contexts.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.contexts.append(tuple(decorator.decorator for decorator in node.decorators))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.contexts.pop()

    def visit_If_body(self, node: cst.If) -> None:
        self.tests.append(node.test)

    def leave_If_body(self, node: cst.If) -> None:
        self.tests.pop()

    def visit_Call(self, node: cst.Call) -> None:
        operands = division_operands(node, self.names)
        if operands is not None:  # `torch.div(1, rms + 1e-8)`, `x.div(rms + 1e-8)`
            self._add(node, *operands, "sqrt")

    # --- divisions ----------------------------------------------------------------------------------
    def _add(self, node, numerator, divisor, root: str) -> None:
        contexts = tuple(expr for level in self.contexts for expr in level)
        self.sites.append(_Site(node, numerator, divisor, root, contexts, tuple(self.tests)))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Divide:
            self._add(node, node.left, node.right, "sqrt")
        elif type(node.operator) is cst.Multiply:
            for numerator, factor in ((node.left, node.right), (node.right, node.left)):
                if type(factor) is cst.Call:
                    self._add(node, numerator, factor, "rsqrt")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.operator) is cst.DivideAssign:
            self._add(node, node.target, node.value, "sqrt")
        elif type(node.operator) is cst.MultiplyAssign and type(node.value) is cst.Call:
            self._add(node, node.target, node.value, "rsqrt")

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: set[int] = set()
        uses = QuotientUses(self.model.tree, self.names)
        for site in self.sites:
            guard = guarded_divisor(site.divisor, self.names, site.root)
            if guard is None or not is_tiny_epsilon(guard.value) or id(guard.guard) in reported:
                continue
            if uses.tamed(site.node) or uses.only_logged(site.node):
                continue  # the quotient feeds a log or an upper clamp: bounded
            if uses.read_out(site.node) and made_full_precision(guard.statistic, self.names):
                continue  # a float32 ratio read out as a Python number (a relative change vs a threshold): no tensor scaled
            if any(exceeds(test, guard.statistic) for test in site.tests):
                continue  # `if norm > eps: q = q * (eps / (norm + 1e-12))`: never near zero here
            kind = self._kind(site, guard)
            if kind is None:
                continue
            reported.add(id(guard.guard))
            self.report(site.node, self._message(site, guard, kind), self._fix(guard))

    def _kind(self, site: _Site, guard: GuardedDivisor) -> Optional[str]:
        if scale_like(site.numerator, self.names):
            return "scale"
        standardised = centred(site.numerator, self.names)  # `(x - mean) / sqrt(var + eps)`
        if not standardised and not roots(site.numerator, self.names) & roots(guard.measured, self.names):
            return "unrelated"
        # a tensor divided by its own size is bounded in float32; in float16 the guard rounds to 0
        autocast = any(autocast_dtype(expr, self.names) == "float16" for expr in site.contexts)
        if autocast and float32_under_autocast(guard.statistic, self.names):
            autocast = False  # `x.pow(2).mean()`, `x.norm()`: autocast computes these in float32
        if autocast or made_half(guard.measured, self.names):
            return "half"
        return None

    # --- message and fix ----------------------------------------------------------------------------
    def _message(self, site: _Site, guard: GuardedDivisor, kind: str) -> str:
        stat, eps = code_of(guard.statistic, limit=40), code_of(guard.epsilon, limit=20)
        shown = eps if eps == f"{guard.value:g}" or eps.startswith(("1e", "1E")) else f"{eps} = {guard.value:g}"
        if kind == "half":
            harm = f"in float16 (autocast / half) `{shown}` rounds to 0, and a zero `{stat}` gives NaN or inf"
        else:
            ratio = code_of(site.numerator, limit=30)
            harm = f"when `{stat}` nears zero `{ratio}` / `{stat}` explodes, and fp16 rounds `{shown}` to 0"
        floor = self._floor(guard) or "a dtype-aware floor (`torch.finfo(dtype).eps`)"
        advice = f"take the root of `{floor}`" if guard.under_sqrt else f"divide by `{floor}`"
        return f"`{stat} + {eps}` is too small a guard: {harm}; {advice} instead"

    def _floor(self, guard: GuardedDivisor) -> Optional[str]:
        dtype_of = _simple(guard.statistic) or _simple(guard.measured)
        if dtype_of is None:
            return None
        statistic = code_of(guard.statistic, limit=10_000)
        if type(guard.statistic) not in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) or guard.statistic.lpar:
            statistic = f"({statistic})" if not guard.statistic.lpar else statistic
        power = "" if guard.squared or guard.under_sqrt else " ** 0.5"
        floor = f"{torch_spelling(self.model.imports)[0]}.finfo({dtype_of}.dtype).eps{power}"
        if not _literal(guard.epsilon):
            # the user's epsilon (a parameter, an attribute, a config field, a constant) stays: it may be tuned
            floor = f"max({code_of(guard.epsilon, limit=10_000)}, {floor})"
        return f"{statistic}.clamp_min({floor})"

    def _fix(self, guard: GuardedDivisor) -> Optional[Fix]:
        floor = self._floor(guard)
        if floor is None:
            return None
        return Fix("unsafe", "clamp the divisor at a dtype-aware floor instead of adding a tiny epsilon",
                   {guard.guard: parsed_expression(floor)}, torch_spelling(self.model.imports)[1])


def _divides(shape: Shape) -> bool:
    """A `/`, a division call (any aliased name: `from torch import div as d`), or a product with a call."""
    if shape.nodes(ast.Div) or any(c.args for c in shape.calls(*DIVISION_METHODS)) or import_aliases(shape):
        return True
    products = [node for node in shape.nodes(ast.BinOp, ast.AugAssign) if type(node.op) is ast.Mult]
    return any(ast.Call in ((type(node.left), type(node.right)) if type(node) is ast.BinOp else (type(node.value),))
               for node in products)


def _literal(expr: cst.BaseExpression) -> bool:
    """A number written in place (`1e-8`, `-1e-8`), not a name, attribute or expression holding one."""
    if type(expr) is cst.UnaryOperation:
        expr = expr.expression
    return type(expr) in (cst.Float, cst.Integer)


def _simple(expr: cst.BaseExpression) -> Optional[str]:
    """The source of a name, attribute chain or plain subscript (no calls): safe to read `.dtype` from."""
    if any(type(node) in (cst.Call, cst.Await, cst.NamedExpr) for node in walk(expr)):
        return None
    if type(expr) in (cst.Name, cst.Attribute, cst.Subscript):
        return code_of(expr, limit=10_000)
    return None
