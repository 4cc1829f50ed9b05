"""SF105 param-sized-accumulator-on-device: buffers shaped like the parameters, summed on the accelerator.

A query over the model: `model.accumulators` finds the parameter-sized buffers a function allocates
(`torch.zeros_like(p)` per parameter, `p.new_zeros(p.shape)`, `torch.zeros(p.shape, device=p.device)`,
in a list, a dict or one tensor) and sums into in place (`acc.add_(g)`, `acc += g`), with what else the
function does with them (`events` and `names`). Reported, at the allocation: a temporary that is summed
across the passes of a loop, not scaled in place (a moving average or optimizer state), not written back
into parameters or gradients, and not handed out of its function (its consumer decides where it lives).

Fix (unsafe, float32 instead of the parameters' dtype): allocate on the CPU in float32 and move what
each add brings (`acc.add_(g.to(acc.device, acc.dtype))`). Only offered when every read of the sums
stays among such buffers (`zip(X_sum, Y_sum)`); otherwise the finding is report-only.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for, parsed_expression
from stabfix.model.domain.accumulators import Accumulator, accumulators
from stabfix.model.training.step_frames import loop_header
from stabfix.shape import Shape, callee_name
from stabfix.shape_queries import STATEMENT_LOOPS, calls_named, root_name, under

_SHAPED = ("zeros", "empty", "full")  # `torch.zeros(p.shape)`, `torch.empty(*p.size())`
_FLAT = ("cat", "concat", "concatenate", "hstack")  # `torch.cat([p.grad.view(-1) for p in ...])`
_ALLOCATIONS = ("zeros_like", "empty_like", "full_like", "new_zeros", "new_empty", "new_full", "new", *_SHAPED, *_FLAT)
_WRAP = (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)


class ParamSizedAccumulatorOnDevice(Checker):
    code = "SF105"
    tokens = ("zeros_like", "empty_like", "full_like", "new_zeros", "new_empty", "new_full", ".new(", "zeros(", "empty(",
              ".grad.", "autograd.grad")  # sums grown from `0` by flat gradient concatenations (`torch.cat(...)`)
    also_needs = (("add_", "sub_", "+=", "-="), ("param",))
    needs = ("names", "events")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported at a buffer's allocation (`zeros_like`, `new_zeros`, `torch.zeros(p.shape)`, a flat `torch.cat` of
        # the gradients) when an in-place add into it (`+=`, `-=`, `.add_`, `.sub_`: into what the allocation is bound
        # or stored to, a loop's or a function's own name for it) is repeated by a `for`/`while` loop: around the add,
        # or around a call of a function of the file that adds
        holders = _holders(shape, [call for call in calls_named(shape, _ALLOCATIONS) if _may_allocate(call)])
        adds = [n for n in shape.nodes(ast.AugAssign) if type(n.op) in (ast.Add, ast.Sub) and root_name(n.target) in holders]
        adds += [c for c in shape.calls("add_", "sub_") if type(c.func) is ast.Attribute and root_name(c.func.value) in holders]
        if not adds:
            return False
        if any(under(shape, add, STATEMENT_LOOPS) for add in adds):
            return True
        own = shape.defined_functions
        return any(under(shape, call, STATEMENT_LOOPS) for name in own for call in shape.calls(name))

    def leave_Module(self, original_node: cst.Module) -> None:
        names, events = self.model.names, self.model.events
        assert names is not None and events is not None
        found = [
            acc for acc in accumulators(events, names, self.model.tree)
            if acc.passes and not (acc.allocation.on_host or acc.decayed or acc.written_back or acc.escapes)
        ]
        fixable = {
            id(acc.holder) for acc in found
            if not (acc.foreign_read or acc.returned or acc.allocation.moved or acc.grown or _legacy(acc))
        }
        changed = True
        while changed:  # sums read together (`zip(X_sum, Y_sum)`) move to the CPU together, or neither does
            changed = False
            for acc in found:
                if id(acc.holder) in fixable and not acc.partners <= fixable:
                    fixable.discard(id(acc.holder))
                    changed = True
        for acc in found:
            fix = self._fix(acc) if id(acc.holder) in fixable else None
            self.report(acc.allocation.call, self._message(acc, fix is not None), fix)

    def _message(self, acc: Accumulator, fixed: bool) -> str:
        models = sorted(model for model in acc.allocation.origin.models if model)
        whose = f"`{models[0]}`" if models else "the model"
        alloc = code_for(acc.allocation.call)
        alloc = alloc if len(alloc) <= 40 else alloc[:37] + "..."
        per = f"one `{alloc}` per parameter of {whose}" if acc.container else f"`{alloc}`, shaped like {whose}'s parameters,"
        if acc.grown:
            per = f"a sum of `{alloc}`, as large as {whose}'s parameters,"
        header = loop_header(acc.passes[0])
        header = header if len(header) <= 45 else header[:42] + "..."
        advice = f"allocate it on the CPU in float32 and add {_term(acc)}"
        if acc.grown:
            advice = "start it as a float32 tensor on the CPU and move each added term there"
        if not fixed:
            advice += ", and move what reads the sums"
        return f"`{acc.name}` keeps {per} on the accelerator, summed on every pass of `{header}`; {advice}"

    def _fix(self, acc: Accumulator) -> Fix | None:
        changes: dict[cst.CSTNode, cst.CSTNode] = {}
        torch = self._torch_name()
        changes[acc.allocation.call] = _on_host(acc.allocation.call, torch or "torch")
        for add in acc.adds:
            node = add.node
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                receiver, args = node.func.value, list(node.args)
                first = next((i for i, arg in enumerate(args) if arg.keyword is None and not arg.star), None)
                if first is None:
                    return None
                args[first] = args[first].with_changes(value=_moved(args[first].value, receiver))
                changes[node] = node.with_changes(args=args)
            elif type(node) is cst.AugAssign:
                changes[node] = node.with_changes(value=_moved(node.value, node.target))
            else:
                return None  # `torch.add(acc, g, out=acc)`, `_foreach_add_`: left to the user
        description = f"allocate `{acc.name}` on the CPU in float32 and move each added term there"
        return Fix("unsafe", description, changes, imports=() if torch else ("torch",))

    def _torch_name(self) -> str | None:
        return next((local for local, qualified in self.context.imports.aliases.items() if qualified == "torch"), None)


def _holders(shape: Shape, allocations: list[ast.Call]) -> set[Optional[str]]:
    """The names an add may reach the allocations through: what they are bound or stored to (`acc = ...`, `sums =
    [... for p in ps]`, `grads[n] = ...`, `grads.append(...)`, `grads += torch.cat(...)`), and any loop's,
    comprehension's or function parameter's name (`for acc, p in zip(sums, ps)`, a helper handed the buffers)."""
    if not allocations:
        return set()
    found: set[Optional[str]] = set()
    for allocation in allocations:
        found.update(a.target.id for a in shape.ancestors(allocation) if type(a) is ast.NamedExpr)
        statement = next((a for a in shape.ancestors(allocation) if isinstance(a, ast.stmt)), None)
        if type(statement) is ast.Assign:
            found.update(root_name(n) for target in statement.targets for n in ast.walk(target))
        elif type(statement) in (ast.AnnAssign, ast.AugAssign):
            found.add(root_name(statement.target))
        elif type(statement) is ast.Expr and type(statement.value) is ast.Call and type(statement.value.func) is ast.Attribute:
            found.add(root_name(statement.value.func.value))
    for node in shape.nodes(ast.For, ast.AsyncFor, ast.comprehension):
        target = node.target  # mostly a plain name: no walk
        found.update([target.id] if type(target) is ast.Name else (n.id for n in ast.walk(target) if type(n) is ast.Name))
    found.update(arg.arg for node in shape.nodes(ast.arguments) for arg in [*node.posonlyargs, *node.args, *node.kwonlyargs])
    return found - {None}


def _may_allocate(call: ast.Call) -> bool:
    """A call `parameters.param_sized_allocation` or `accumulators.flat_gradient` may take for a buffer (any other
    name: an import renamed it)."""
    name = callee_name(call)
    first = call.args[0] if call.args else None
    if name in _SHAPED:
        first = first.value if type(first) is ast.Starred else first
        return type(first) is ast.Attribute and first.attr == "shape" or (type(first) is ast.Call and callee_name(first) == "size")
    if name in _FLAT:
        return type(first) in (ast.ListComp, ast.GeneratorExp)
    return True


def _legacy(acc: Accumulator) -> bool:
    """`p.new(p.size())`: the legacy constructor takes no `dtype=`; left to the user."""
    func = acc.allocation.call.func
    return type(func) is cst.Attribute and func.attr.value == "new"


def _term(acc: Accumulator) -> str:
    """`p.grad.to(acc.device, acc.dtype)` in the user's own words, from the first add."""
    node = acc.adds[0].node
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.args:
        receiver, value = node.func.value, node.args[0].value
    elif type(node) is cst.AugAssign:
        receiver, value = node.target, node.value
    else:
        return "each term moved to the buffer's device and dtype (`.to(...)`)"
    text = code_for(_moved(value, receiver))
    return f"`{text}`" if len(text) <= 60 else "each term moved to the buffer's device and dtype (`.to(...)`)"


def _on_host(call: cst.Call, torch: str) -> cst.Call:
    args = [arg for arg in call.args if not (arg.keyword is not None and arg.keyword.value == "device")]
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    args.append(cst.Arg(cst.SimpleString('"cpu"'), keyword=cst.Name("device"), equal=_EQUAL))
    if not any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in call.args):
        args.append(cst.Arg(parsed_expression(f"{torch}.float32"), keyword=cst.Name("dtype"), equal=_EQUAL))
    return call.with_changes(args=args)


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _moved(value: cst.BaseExpression, receiver: cst.BaseExpression) -> cst.BaseExpression:
    """`g` -> `g.to(acc.device, acc.dtype)`; numbers stay as they are."""
    if type(value) in (cst.Integer, cst.Float):
        return value
    if isinstance(value, _WRAP) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    spelled = code_for(receiver)
    args = [cst.Arg(parsed_expression(f"{spelled}.device")), cst.Arg(parsed_expression(f"{spelled}.dtype"))]
    return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("to")), args=args)
