"""SF101 loss-target-requires-grad: a loss target is made to require grad and never differentiated."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.model.flow.gradient_use import (
    GradientUse,
    caller_bindings,
    contains,
    holders,
    is_requires_grad_call,
    is_true,
    plain_aliases,
    requires_grad_keyword,
    return_positions,
    target_roots,
)
from stabfix.model.calls import torch_ops
from stabfix.model.calls.losses import LossOperands
from stabfix.model.functions.summaries import parameter_receiving
from stabfix.model.source.names import Binding
from stabfix.checker import Checker
from stabfix.findings import Fix

@dataclass
class _Mark:
    """One place that makes a tensor require grad."""

    node: cst.CSTNode  # reported node
    names: tuple[str, ...]  # variables that end up requiring grad
    fix: Fix | None
    spelling: str  # how the user wrote it, for the message
    inline: cst.Call | None = None  # a requires_grad_ call used directly as an expression


class LossTargetRequiresGrad(Checker):
    code = "SF101"
    tokens = ("requires_grad",)
    # the target may be made to require grad by a helper of another scanned file that returns it
    tokens_elsewhere = (".backward(",)
    # every loss the rule recognises is spelled with one of these (`F.mse_loss`, `nn.KLDivLoss`,
    # `criterion`, `loss_fn`, `F.cross_entropy`, `F.kl_div`)
    also_needs = (("loss", "Loss", "criterion", "cross_entropy", "kl_div"),)
    needs = ("names", "losses", "gradients", "summaries")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.blocks: list[cst.BaseSuite] = []
        self.lines: list[cst.SimpleStatementLine] = []
        # outermost function (or the module, for a plain script) -> marks inside it
        self.marks: dict[cst.FunctionDef | cst.Module, list[_Mark]] = {}
        self.module: cst.Module | None = None
        self.assign_values: set[int] = set()
        # calls that may mark their arguments in place (a helper's `t.requires_grad_()`), decided after the
        # traversal from the callee's summary: call -> outermost function (or the module) around it
        self.calls: list[tuple[cst.Call, cst.FunctionDef | cst.Module]] = []

    # --- traversal bookkeeping -------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.lines.pop()

    def _add(self, mark: _Mark) -> None:
        # Module-level scripts (a plain training loop) are analysed as one scope.
        functions = self.model.enclosing.enclosing_functions()
        outer = functions[0] if functions else self.module
        self.marks.setdefault(outer, []).append(mark)  # type: ignore[arg-type]

    # --- collecting marks ----------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for names, value in torch_ops.assigned(node):
            self._mark_assigned(names, value)
        # `t.requires_grad = True`
        for target in node.targets:
            attr = target.target
            if (
                isinstance(attr, cst.Attribute)
                and attr.attr.value == "requires_grad"
                and is_true(node.value)
                and isinstance(attr.value, cst.Name)
            ):
                self._add(
                    _Mark(node=node, names=(attr.value.value,), fix=self._remove_statement_fix(node), spelling=".requires_grad = True")
                )

    def _mark_assigned(self, names: tuple[str, ...], value: cst.BaseExpression) -> None:
        """`t = y.requires_grad_()`, `t = torch.tensor(y, requires_grad=True)`, also under operations that
        keep the flag (`Variable(y, requires_grad=True).cuda()`, `y.requires_grad_().view(-1)`)."""
        marked = torch_ops.grad_operand(value, self.context.imports.qualify)
        if marked is None:
            return  # `.long()`, `.detach()`, `.argmax()` on the way: the assigned tensor does not require grad
        if is_requires_grad_call(marked):
            self.assign_values.add(id(marked))
            inner = marked.func.value  # type: ignore[attr-defined]
            in_place = inner.value if isinstance(inner, cst.Name) else None
            self._add(
                _Mark(
                    node=marked,
                    names=names + ((in_place,) if in_place else ()),
                    fix=Fix("safe", "drop `.requires_grad_()`, keep the tensor", {marked: inner}),
                    spelling=f".{marked.func.attr.value}()",  # type: ignore[attr-defined]
                )
            )
            return
        keyword = requires_grad_keyword(marked, self.context.imports)
        if keyword is not None and names:
            self.assign_values.add(id(marked))
            fix = _drop_keyword_fix(marked, keyword)  # type: ignore[arg-type]
            self._add(_Mark(node=marked, names=names, fix=fix, spelling="requires_grad=True"))

    def visit_Call(self, node: cst.Call) -> None:
        if node.args and isinstance(node.func, (cst.Name, cst.Attribute)):
            functions = self.model.enclosing.enclosing_functions()
            self.calls.append((node, functions[0] if functions else self.module))  # type: ignore[arg-type]
        if id(node) in self.assign_values or not is_requires_grad_call(node):
            return
        inner = node.func.value  # type: ignore[attr-defined]
        statement = self.lines[-1] if self.lines else None
        is_statement = (
            statement is not None
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and statement.body[0].value is node
        )
        if is_statement and isinstance(inner, cst.Name):
            self._add(
                _Mark(
                    node=node,
                    names=(inner.value,),
                    fix=self._remove_statement_fix(statement.body[0]),
                    spelling=f".{node.func.attr.value}()",  # type: ignore[attr-defined]
                )
            )
        elif not is_statement:
            self._add(
                _Mark(
                    node=node,
                    names=(),
                    fix=Fix("safe", "drop `.requires_grad_()`, keep the tensor", {node: inner}),
                    spelling=f".{node.func.attr.value}()",  # type: ignore[attr-defined]
                    inline=node,
                )
            )

    def _remove_statement_fix(self, small: cst.BaseSmallStatement) -> Fix | None:
        line = self.lines[-1] if self.lines else None
        if line is None:
            return None
        description = "remove the statement that makes the target require grad"
        if len(line.body) > 1:
            return Fix("safe", description, {small: cst.RemoveFromParent()})
        block = self.blocks[-1] if self.blocks else None
        if block is not None and len(block.body) == 1 and block.body[0] is line:
            return Fix("safe", description, {line: line.with_changes(body=[cst.Pass()])})
        return Fix("safe", description, {line: cst.RemoveFromParent()})

    # --- deciding ---------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        self.reported_losses: set[int] = set()
        for function, marks in self.marks.items():
            facts, bindings = self._facts(function)
            for mark in marks:
                self._decide(mark, function, facts, bindings)
        self._arguments_marked_by_callees()
        self._targets_returned_requiring_grad()

    def _arguments_marked_by_callees(self) -> None:
        """`helper(y)` where `helper` (of this file, or of another scanned file through the project) makes
        its parameter require grad in place (`t.requires_grad_()`, any number of calls deep): `y` requires
        grad from there on. Reported at the call when `y` is then the target of a loss and nothing reads its
        gradient. No automatic fix: the flag is set in the helper, which may have other callers."""
        summaries = self.model.summaries
        for call, outer in self.calls:
            marked = [effect for effect in summaries.effects_at(call) if effect.kind == "requires_grad"
                      and effect.target is not None and "." not in effect.target]
            if not marked:
                continue
            facts, bindings = self._facts(outer)
            own = {b.name for b in bindings if b.kind in ("assign", "walrus")}
            for effect in marked:
                names = plain_aliases(bindings, {effect.target}, self.context.imports.qualify)
                if names & facts.parameters and effect.target not in own:
                    continue  # the caller's own caller handed the tensor in: it may read the gradient
                loss = self._unread_target_loss(names, facts, bindings, shown=(call,))
                if loss is None or id(loss.call) in self.reported_losses:
                    continue
                self.reported_losses.add(id(loss.call))
                callee = cst.Module(body=[]).code_for_node(call.func)
                self.report(call, (
                    f"`{effect.target}` is the target of `{_short(loss)}` but `{callee}` makes it require grad, and "
                    "nothing reads its gradient; drop the requires_grad part in the helper (no automatic fix: "
                    "the helper may have other callers)"
                ))

    def _targets_returned_requiring_grad(self) -> None:
        """`x, y = prepare(batch)` where `prepare` (of this file, or of another scanned file through
        the project) returns `y` made to require grad (however it spells it, any number of calls deep): reported at the loss target when nothing in the caller may
        read its gradient. No automatic fix: the tensor is made in the helper."""
        summaries = self.model.summaries
        for site, loss in self.model.losses.loss_sites():
            target = loss.target
            if not isinstance(target, cst.Name) or site.outer is None or id(loss.call) in self.reported_losses:
                continue
            returned = summaries.returned_to(target)
            if returned is None or not returned.made_to_require_grad:
                continue
            facts, bindings = self._facts(site.outer)
            # handed to the helper that returns it: shown by its summary
            shown = tuple(b.value for b in self.model.names.reaching(target) if isinstance(b.value, cst.Call))
            if self._unread_target_loss({target.value}, facts, bindings, shown) is not loss:
                continue
            self.reported_losses.add(id(loss.call))
            self.report(target, (
                f"`{target.value}` is the target of `{_short(loss)}` but the function that returns it (in this file or "
                "another scanned file) makes it require grad, and nothing reads its gradient; drop the requires_grad "
                "part where it is made"
            ))

    def _facts(self, scope: cst.FunctionDef | cst.Module) -> tuple[GradientUse, list[Binding]]:
        gradients = self.model.gradients
        return gradients.of(scope), gradients.bindings_in(scope)

    def _decide(self, mark: _Mark, function, facts: GradientUse, bindings: list[Binding]) -> None:
        if mark.inline is not None:
            loss = facts.loss_with_target(lambda expr: contains(expr, mark.inline))
            if loss is not None:
                known = facts.is_known(loss)
                self.reported_losses.add(id(loss.call))
                self.report(mark.node, _message(mark, None, loss, known), mark.fix if known else None)
            return
        names = self._aliases(bindings, set(mark.names))
        own = {b.name for b in bindings if b.kind in ("assign", "walrus")}
        if names & facts.parameters and not set(mark.names) & own:
            return  # marks the caller's tensor in place: the caller may read its grad
        if names and names & facts.returned and not names & facts.differentiated:
            self._decide_in_callers(mark, function, names, facts, bindings)
            return
        loss = self._unread_target_loss(names, facts, bindings)
        if loss is not None:
            known = facts.is_known(loss)
            self.reported_losses.add(id(loss.call))
            self.report(mark.node, _message(mark, mark.names[0] if mark.names else None, loss, known), mark.fix if known else None)

    def _aliases(self, bindings: list[Binding], names: set[str]) -> set[str]:
        """`names` and their aliases (`plain_aliases`), also the names a function hands them back to
        (`x2, y2 = reshape_pair(x, y)` where the summary says element 1 is its parameter `y`)."""
        qualify = self.context.imports.qualify
        found = plain_aliases(bindings, names, qualify)
        for _ in range(4):
            handed_back = {b.name for b in bindings if self._hands_back(b, found)}
            if handed_back <= found:
                break
            found = plain_aliases(bindings, found | handed_back, qualify)
        return found

    def _hands_back(self, binding: Binding, names: set[str]) -> bool:
        call = binding.value
        if not isinstance(call, cst.Call) or binding.kind not in ("assign", "unpack"):
            return False
        summary = self.model.summaries.function_of_call(call)
        if summary is None or not summary.returns:
            return False
        if binding.kind == "unpack" and len(binding.position) == 1 and binding.position[0] < len(summary.returns):
            facts = summary.returns[binding.position[0]]
        elif binding.kind == "assign" and len(summary.returns) == 1:
            facts = summary.returns[0]
        else:
            return False
        return any(
            parameter_receiving(summary, call, arg) == facts.parameter
            and isinstance(operand := torch_ops.grad_operand(arg.value, self.context.imports.qualify), cst.Name)
            and operand.value in names
            for arg in call.args
        ) if facts.parameter is not None else False

    def _escaped(self, facts: GradientUse, shown: tuple[cst.Call, ...] = ()) -> set[str]:
        """What may reach code that reads its gradient: all the function hands over, but for the calls
        `shown` (a callee whose summary the caller has read) and functions whose summary shows they never
        read the receiving parameter's gradient."""
        return facts.escaped_unless(lambda call, arg: any(call is c for c in shown) or self.model.summaries.grad_unread_at(call, arg))

    def _unread_target_loss(self, names: set[str], facts: GradientUse, bindings: list[Binding],
                            shown: tuple[cst.Call, ...] = ()) -> LossOperands | None:
        """The loss `names` are the target of, when nothing else in the function may read their gradient
        (`shown`: calls whose callee's summary the caller has read, see `_escaped`)."""
        if not names or names & facts.differentiated or names & facts.returned:
            return None
        if holders(bindings, names, self.context.imports.qualify) & self._escaped(facts, shown):
            return None
        losses = self.model.losses
        loss = facts.loss_with_target(lambda expr: bool(target_roots(expr, self.context.imports) & names))
        # a helper of the file that takes the argmax of its target argument makes no target of the tensor
        return loss if loss is None or losses.target_keeps_grad(loss) else None

    def _decide_in_callers(self, mark: _Mark, function, names: set[str], facts: GradientUse, bindings: list[Binding]) -> None:
        """A helper of this file returns the marked tensor (`return x, y`): report when every caller feeds
        it to a loss as its target and none may read its gradient. No automatic fix: code outside the file
        may call the helper too."""
        if not isinstance(function, cst.FunctionDef):
            return
        if holders(bindings, names, self.context.imports.qualify) & self._escaped(facts):
            return
        positions = return_positions(self.model.names.returns.get(function, []), names)
        callers = caller_bindings(self.model.losses, function, positions) if positions else None
        found = []
        for caller, name in callers or ():
            caller_facts, caller_bindings_ = self._facts(caller)
            loss = self._unread_target_loss({name}, caller_facts, caller_bindings_)
            if loss is None:
                return
            found.append(loss)
        if found:
            self.reported_losses.update(id(loss.call) for loss in found)
            name = mark.names[0] if mark.names else None
            self.report(mark.node, _message(mark, name, found[0], False, returned_by=function.name.value))


def _short(loss: LossOperands) -> str:
    call = cst.Module(body=[]).code_for_node(loss.call)
    return call if len(call) <= 70 else f"{loss.loss_name}(...)"


def _message(mark: _Mark, name: str | None, loss: LossOperands, known: bool = True, returned_by: str = "") -> str:
    subject = f"`{name}`" if name else "this tensor"
    call = cst.Module(body=[]).code_for_node(loss.call)
    if len(call) > 70:
        call = f"{loss.loss_name}(...)"
    message = (
        f"{subject} is the target of `{call}` but is made to require grad ({mark.spelling}), "
        "and nothing reads its gradient; drop the requires_grad part and keep the detached tensor"
    )
    if returned_by:
        message += f" (no automatic fix: `{returned_by}` returns it and may have callers in other files)"
    elif not known:
        message += f" (no automatic fix: `{loss.loss_name}` is defined elsewhere; make sure it does not differentiate {subject})"
    return message


def _drop_keyword_fix(call: cst.Call, keyword: cst.Arg) -> Fix:
    args = list(call.args)
    position = args.index(keyword)
    args.pop(position)
    if args and position == len(args):
        args[-1] = args[-1].with_changes(comma=keyword.comma)
    return Fix("safe", "drop `requires_grad=True`", {call: call.with_changes(args=args)})
