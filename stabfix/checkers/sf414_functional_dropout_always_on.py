"""SF414 functional-dropout-always-on: `F.dropout(x, p)` in a module's `forward` without the module's mode.

`torch.nn.functional.dropout` (and `dropout1d/2d/3d`, `alpha_dropout`, `feature_alpha_dropout`) takes
`training=True` by default: unlike `nn.Dropout`, it does not read the module's `self.training`, so after
`model.eval()` it still zeroes activations and evaluation, validation and inference are random. A query
over the model: a call of one of them (through imports and aliases, `names.qualify`) that passes no
`training` (neither the keyword, nor the third positional argument, nor `**kwargs`), in the `forward` of a
module class or a function of the file that `forward` runs (`calls/module_classes.py`, a few calls deep),
outside any branch that runs only in training (`if self.training:`, and-ed or `elif`, the `else` of
`if not self.training:`, a conditional expression, after `if not self.training: return`).

Left alone: any `training=` the code passes, the literal `True` included (a choice: Tacotron 2's prenet
keeps dropout on at inference on purpose, MC dropout does too; `torch.dropout` always takes it), a literal
probability of 0, a method that `forward` does not run (an MC-dropout sampler), code outside any module.

Fix (unsafe, it changes what evaluation computes): pass `training=self.training` where the call sits
directly in a method of the module; in a helper function there is no `self` to read, so report only.
"""

from __future__ import annotations

from typing import Optional

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.device_moves import keyword
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.source.scopes import first_parameter
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape
from stabfix.shape_modules import may_be_module_class
from stabfix.shape_names import qualified_names

FUNCTIONAL = frozenset({f"torch.nn.functional.{name}" for name in (
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")})
TRAINING_POSITION = 2


class FunctionalDropoutAlwaysOn(Checker):
    code = "SF414"
    tokens = ("dropout",)
    also_needs = (("forward",),)
    # the call resolves through this file's imports to one of `FUNCTIONAL`: it spells its name and `torch`
    words = (tuple(name.rsplit(".", 1)[1] for name in sorted(FUNCTIONAL)), ("torch",))
    needs = ("names",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a call of a functional dropout (any qualified name the model may read) in a function, passing no mode, in a file
        # with a `forward` of a class that may be a module (`forward_reach`)
        if not any(type(item) in (ast.FunctionDef, ast.AsyncFunctionDef) and item.name == "forward" and may_be_module_class(shape, node)
                   for node in shape.nodes(ast.ClassDef) for item in node.body):  # type: ignore[attr-defined]
            return False
        return any(not any(type(a) is ast.Starred for a in call.args) and len(call.args) <= TRAINING_POSITION
                   and not any(k.arg in (None, "training") for k in call.keywords) and shape.enclosing_function(call) is not None
                   and not qualified_names(shape, call.func).isdisjoint(FUNCTIONAL)
                   for call in shape.calls(*shape.spellings(*(name.rsplit(".", 1)[1] for name in FUNCTIONAL))))

    def __init__(self, context) -> None:
        super().__init__(context)
        # (call, enclosing functions, the gates around it: "mode" (runs only in training) or "other")
        self.candidates: list[tuple[cst.Call, tuple[cst.FunctionDef, ...], tuple[str, ...]]] = []
        self._gates: list[str] = []
        self._training_only: set[int] = set()  # functions that returned early unless training (`if not self.training: return x`)

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) in (cst.Name, cst.Attribute):  # aliases (`dropout as drop`) resolve at the end
            functions = self.model.enclosing.enclosing_functions()
            early = ("mode",) if functions and id(functions[-1]) in self._training_only else ()
            self.candidates.append((node, functions, (*self._gates, *early)))

    # the branches around a call: `if self.training:` (also `and`-ed, `elif`, the `else` of `if not self.training:`)
    def visit_If_body(self, node: cst.If) -> None:
        self._gates.append(_gate(node.test, negated=False))

    def leave_If_body(self, node: cst.If) -> None:
        self._gates.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self._gates.append(_gate(node.test, negated=True))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._gates.pop()

    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self._gates.append(_gate(node.test, negated=False))

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self._gates.pop()

    def visit_IfExp_orelse(self, node: cst.IfExp) -> None:
        self._gates.append(_gate(node.test, negated=True))

    def leave_IfExp_orelse(self, node: cst.IfExp) -> None:
        self._gates.pop()

    def leave_If(self, original_node: cst.If) -> None:
        functions = self.model.enclosing.enclosing_functions()
        if functions and _gate(original_node.test, negated=True) == "mode" and _exits(original_node.body):
            self._training_only.add(id(functions[-1]))

    def leave_Module(self, original_node: cst.Module) -> None:
        names = self.model.names
        classes = ModuleClasses(names, self.context.project)
        for call, functions, gates in self.candidates:
            qualified = names.qualify(call.func) or ""
            if qualified not in FUNCTIONAL or _passes_training(call) or _drops_nothing(call):
                continue  # the caller chose (`training=self.training`, a flag, `True` for MC dropout), or p = 0
            if "mode" in gates:
                continue  # runs only in training
            function = next((f for f in reversed(functions) if classes.forward_reach(f) is not None), None)
            if function is None:
                continue
            owner = classes.forward_reach(function)
            assert owner is not None
            self.report(call, self._message(call, owner, function), self._fix(call, function, functions[-1], classes))

    def _fix(self, call: cst.Call, function: cst.FunctionDef, innermost: cst.FunctionDef,
             classes: ModuleClasses) -> Optional[Fix]:
        owner = classes.owner_of(function)
        if function is not innermost or owner is None or not classes.is_module_class(owner):
            return None  # a helper function has no `self` to read the mode from
        receiver = first_parameter(function)
        if receiver is None:
            return None
        mode = cst.Attribute(value=cst.Name(receiver), attr=cst.Name("training"))
        args = [*call.args, keyword("training", mode)]
        return Fix("unsafe", f"follow the module's mode: `training={receiver}.training` (unsafe: evaluation "
                             "then runs without dropout)", {call: call.with_changes(args=args)})

    def _message(self, call: cst.Call, owner: cst.ClassDef, function: cst.FunctionDef) -> str:
        how = "has no `training=` (its default is `True`)"
        via = "" if function.name.value == "forward" else f" (`{function.name.value}()`, which it runs)"
        return (
            f"`{code_of(call, 60)}` in `{owner.name.value}.forward`{via} {how}: unlike `nn.Dropout` it ignores "
            f"`model.eval()`, so evaluation and inference stay random; pass `training=self.training` "
            f"(or use an `nn.Dropout` layer)"
        )


def _passes_training(call: cst.Call) -> bool:
    """`training=...`, a third positional argument, or `*args`/`**kwargs` that may carry it."""
    return any(arg.star or (arg.keyword is not None and arg.keyword.value == "training")
               or (arg.keyword is None and index == TRAINING_POSITION) for index, arg in enumerate(call.args))


def _gate(test: cst.BaseExpression, negated: bool) -> str:
    """"mode" when the branch runs only in training: `if self.training:` (or `and`-ed with other tests), or the
    `else` of `if not self.training:`; "other" for any other condition."""
    if negated:
        inner = test.expression if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not else None
        return "mode" if inner is not None and _reads_mode(inner) else "other"
    parts: list[cst.BaseExpression] = [test]
    while parts and type(parts[-1]) is cst.BooleanOperation and type(parts[-1].operator) is cst.And:
        last = parts.pop()
        parts += [last.left, last.right]  # type: ignore[attr-defined]
    return "mode" if any(_reads_mode(part) for part in parts) else "other"


def _reads_mode(expr: cst.BaseExpression) -> bool:
    """`self.training`, `self.model.training`: a module's mode."""
    return type(expr) is cst.Attribute and expr.attr.value == "training"


def _exits(body: cst.BaseSuite) -> bool:
    statements = body.body if type(body) is cst.IndentedBlock else [body]
    last = statements[-1] if statements else None
    smalls = last.body if type(last) is cst.SimpleStatementLine else (last.body if type(last) is cst.SimpleStatementSuite else [])
    return bool(smalls) and type(smalls[-1]) in (cst.Return, cst.Raise)


def _drops_nothing(call: cst.Call) -> bool:
    """`F.dropout(x, 0.0)` / `p=0`: a literal probability of zero."""
    for index, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == "p") or (arg.keyword is None and index == 1):
            return type(arg.value) in (cst.Integer, cst.Float) and float(arg.value.value) == 0.0
    return False
