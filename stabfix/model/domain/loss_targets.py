"""Loss targets made to require grad, and whether anything ever reads their gradient.

The model part `loss_targets` (built on `names`, `losses`, `gradients` and `summaries`; SF101 asks it, and so may any
rule that asks "is this tensor the target of a loss, and is its gradient ever read?"):

- `requests`: each place that makes a tensor require grad (`GradRequest`), recorded in the traversal with the
  outermost function around it (or the module, for a plain script): `t.requires_grad_()` as a statement or used
  inline, `t = y.requires_grad_()`, `t = torch.tensor(y, requires_grad=True)` (also under operations that keep
  the flag: `Variable(y, requires_grad=True).cuda()`), `t.requires_grad = True`.
- `unread_target(names, scope, shown)`: the loss whose target `names` are (with their aliases) when nothing in
  the scope may read their gradient: not differentiated (`.grad`, `autograd.grad`, an optimizer), not returned,
  not handed to code that may read it (a call whose callee's summary shows it never reads that parameter's
  gradient, or a call in `shown` whose callee the caller has read, does not count); a target a helper of the
  file takes the argmax of is no target.
- `outcome(request)`: what became of a request's tensor (`UnreadTarget`: the losses, whether the loss is known not
  to differentiate its target, the helper that returns the tensor to callers that feed it to a loss), or None.
- `marked_by_callees()`: calls of a helper (of this file or another scanned one, any number of calls deep) that
  makes its argument require grad in place, with the loss the argument then feeds unread.
- `returned_requiring_grad()`: loss targets that a helper returns made to require grad, unread in the caller.
- `marked_in_loss_definitions()`: the `forward` of a loss class of the file (or a loss function of it) makes the
  parameter that receives the target require grad (`target = target.float(); target.requires_grad = True`), and
  neither it nor the caller that hands the target in reads that gradient.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.losses import LossIndex, LossOperands
from stabfix.model.flow.gradient_use import (
    GradientFacts,
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
from stabfix.model.domain.objective_targets import ObjectiveTargets
from stabfix.model.calls.loss_sources import receiving_parameter
from stabfix.model.functions.summaries import Summaries, parameter_receiving
from stabfix.model.functions.summary_facts import ClassSummary, Effect
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import NAMES_AND_ATTRIBUTES

@dataclass
class GradRequest:
    """One place that makes a tensor require grad."""

    node: cst.CSTNode  # the call, or the `t.requires_grad = True` assignment
    names: tuple[str, ...]  # variables that end up requiring grad
    scope: cst.FunctionDef | cst.Module  # the outermost function around it, or the module
    spelling: str  # how the user wrote it
    inline: bool = False  # a `requires_grad_()` call used directly as an expression (`loss(x, y.requires_grad_())`)
    keyword: Optional[cst.Arg] = None  # the `requires_grad=True` argument of `node`
    # a request that is a whole statement (`t.requires_grad_()`, `t.requires_grad = True`): it, its line and
    # the innermost indented block around it
    statement: Optional[cst.BaseSmallStatement] = None
    line: Optional[cst.SimpleStatementLine] = None
    block: Optional[cst.BaseSuite] = None


@dataclass(frozen=True)
class UnreadTarget:
    """The losses a tensor made to require grad is the target of, with nothing reading its gradient."""

    losses: tuple[LossOperands, ...]
    known: bool  # the loss is torch's own or a same-file function using it as its target: dropping the flag is safe
    returned_by: Optional[str] = None  # the same-file helper returning the tensor to callers that feed the losses

    @property
    def loss(self) -> LossOperands:
        return self.losses[0]


class LossTargets(cst.BatchableCSTVisitor):
    def __init__(self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Names, losses: LossIndex,
                 gradients: GradientFacts, summaries: Summaries, objectives: Optional[ObjectiveTargets] = None) -> None:
        super().__init__()
        self.imports, self.enclosing, self.names = imports, enclosing, names
        self.losses, self.gradients, self.summaries = losses, gradients, summaries
        self.objectives = objectives
        self.requests: list[GradRequest] = []
        # calls that may mark their arguments in place, with the outermost function (or the module) around them
        self.calls: list[tuple[cst.Call, cst.FunctionDef | cst.Module]] = []
        self._module: Optional[cst.Module] = None
        self._blocks: list[cst.BaseSuite] = []
        self._lines: list[cst.SimpleStatementLine] = []
        self._assigned: set[int] = set()  # requires_grad calls already recorded as an assigned value

    # --- traversal ------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._lines.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._lines.pop()

    def _scope(self) -> cst.FunctionDef | cst.Module:
        functions = self.enclosing.enclosing_functions()
        return functions[0] if functions else self._module  # type: ignore[return-value]

    def _statement(self, node: cst.CSTNode, names: tuple[str, ...], statement: cst.BaseSmallStatement, spelling: str) -> None:
        line = self._lines[-1] if self._lines else None
        self.requests.append(GradRequest(node, names, self._scope(), spelling, statement=statement, line=line,
                                         block=self._blocks[-1] if self._blocks else None))

    def visit_Assign(self, node: cst.Assign) -> None:
        for names, value in torch_ops.assigned(node):
            self._assigned_request(names, value)
        for target in node.targets:  # `t.requires_grad = True`
            attr = target.target
            if type(attr) is cst.Attribute and attr.attr.value == "requires_grad" and is_true(node.value) \
                    and type(attr.value) is cst.Name:  # type: ignore[attr-defined]
                self._statement(node, (attr.value.value,), node, ".requires_grad = True")

    def _assigned_request(self, names: tuple[str, ...], value: cst.BaseExpression) -> None:
        marked = torch_ops.grad_operand(value, self.imports.qualify)
        if marked is None:
            return  # `.long()`, `.detach()`, `.argmax()` on the way: the assigned tensor does not require grad
        if is_requires_grad_call(marked):
            self._assigned.add(id(marked))
            inner = marked.func.value  # type: ignore[attr-defined]
            in_place = (inner.value,) if type(inner) is cst.Name else ()
            self.requests.append(GradRequest(marked, names + in_place, self._scope(), f".{marked.func.attr.value}()"))  # type: ignore[attr-defined]
            return
        keyword = requires_grad_keyword(marked, self.imports)
        if keyword is not None and names:
            self._assigned.add(id(marked))
            self.requests.append(GradRequest(marked, names, self._scope(), "requires_grad=True", keyword=keyword))

    def visit_Call(self, node: cst.Call) -> None:
        if node.args and type(node.func) in NAMES_AND_ATTRIBUTES:
            self.calls.append((node, self._scope()))
        if id(node) in self._assigned or not is_requires_grad_call(node):
            return
        inner, spelling = node.func.value, f".{node.func.attr.value}()"  # type: ignore[attr-defined]
        line = self._lines[-1] if self._lines else None
        if line is not None and len(line.body) == 1 and type(line.body[0]) is cst.Expr and line.body[0].value is node:
            if type(inner) is cst.Name:
                self._statement(node, (inner.value,), line.body[0], spelling)
        else:
            self.requests.append(GradRequest(node, (), self._scope(), spelling, inline=True))

    # --- after the traversal --------------------------------------------------------------------
    def by_scope(self) -> dict[cst.FunctionDef | cst.Module, list[GradRequest]]:
        grouped: dict[cst.FunctionDef | cst.Module, list[GradRequest]] = {}
        for request in self.requests:
            grouped.setdefault(request.scope, []).append(request)
        return grouped

    def scope_facts(self, scope: cst.FunctionDef | cst.Module) -> tuple[GradientUse, list[Binding]]:
        return self.gradients.of(scope), self.gradients.bindings_in(scope)

    def outcome(self, request: GradRequest) -> Optional[UnreadTarget]:
        facts, bindings = self.scope_facts(request.scope)
        if request.inline:
            loss = facts.loss_with_target(lambda expr: contains(expr, request.node))
            return UnreadTarget((loss,), facts.is_known(loss)) if loss is not None else None
        names = self.aliases(bindings, set(request.names))
        own = {b.name for b in bindings if b.kind in ("assign", "walrus")}
        if names & facts.parameters and not set(request.names) & own:
            return None  # marks the caller's tensor in place: the caller may read its grad
        if names and names & facts.returned and not names & facts.differentiated:
            found = self.unread_in_callers(request.scope, names, facts, bindings)
            return UnreadTarget(tuple(found), False, request.scope.name.value) if found else None  # type: ignore[union-attr]
        loss = self._unread(names, facts, bindings)
        return UnreadTarget((loss,), facts.is_known(loss)) if loss is not None else None

    def unread_target(self, names: set[str], scope: cst.FunctionDef | cst.Module,
                      shown: tuple[cst.Call, ...] = ()) -> Optional[LossOperands]:
        """The loss `names` are the target of, when nothing else in `scope` may read their gradient."""
        return self._unread(names, *self.scope_facts(scope), shown)

    def _unread(self, names: set[str], facts: GradientUse, bindings: list[Binding],
                shown: tuple[cst.Call, ...] = ()) -> Optional[LossOperands]:
        if not names or names & facts.differentiated or names & facts.returned:
            return None
        held = holders(bindings, names, self.imports.qualify)
        if held & self._escaped(facts, shown):
            # handed to functions of the file that only compute arithmetic of it: a hand-written objective
            pure = self.objectives.pure_call if self.objectives is not None else None
            if pure is None or held & self._escaped(facts, shown, pure):
                return None
            return self._hand_written(names, facts, bindings)
        loss = facts.loss_with_target(lambda expr: bool(target_roots(expr, self.imports) & names))
        if loss is None:
            return self._hand_written(names, facts, bindings)
        # a helper of the file that takes the argmax of its target argument makes no target of the tensor
        return loss if self.losses.target_keeps_grad(loss) else None

    def _hand_written(self, names: set[str], facts: GradientUse, bindings: list[Binding]) -> Optional[LossOperands]:
        """A hand-written objective the scope backpropagates compares the data tensors `names` with a model's
        output by arithmetic alone (`objective_targets`): a loss whose target they are, certainly not
        differentiated there."""
        if self.objectives is None or not self.objectives.is_data(bindings, names):
            return None
        site = self.objectives.compared(names, facts.calls)
        if site is None:
            return None
        return LossOperands(site, "the hand-written objective", None, None, kind="hand-written", checked=True)

    def _escaped(self, facts: GradientUse, shown: tuple[cst.Call, ...] = (),
                 also: Optional[Callable[[cst.Call], bool]] = None) -> set[str]:
        """What may reach code that reads its gradient: all the scope hands over, but for the calls `shown`
        (a callee whose summary the caller has read), functions whose summary shows they never read the
        receiving parameter's gradient, and calls `also` clears."""
        return facts.escaped_unless(lambda call, arg: any(call is c for c in shown) or self.summaries.grad_unread_at(call, arg)
                                    or (also is not None and also(call)))

    def aliases(self, bindings: list[Binding], names: set[str]) -> set[str]:
        """`names` and their aliases (`plain_aliases`), also the names a function hands them back to
        (`x2, y2 = reshape_pair(x, y)` where the summary says element 1 is its parameter `y`)."""
        found = plain_aliases(bindings, names, self.imports.qualify)
        for _ in range(4):
            handed_back = {b.name for b in bindings if self._hands_back(b, found)}
            if handed_back <= found:
                break
            found = plain_aliases(bindings, found | handed_back, self.imports.qualify)
        return found

    def _hands_back(self, binding: Binding, names: set[str]) -> bool:
        call = binding.value
        if type(call) is not cst.Call or binding.kind not in ("assign", "unpack"):
            return False
        summary = self.summaries.function_of_call(call)
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
            and type(operand := torch_ops.grad_operand(arg.value, self.imports.qualify)) is cst.Name
            and operand.value in names
            for arg in call.args
        ) if facts.parameter is not None else False

    def unread_in_callers(self, function: cst.FunctionDef | cst.Module, names: set[str], facts: GradientUse,
                          bindings: list[Binding]) -> list[LossOperands]:
        """A helper of this file returns the tensor (`return x, y`): the losses of its callers, when every caller
        feeds it to a loss as its target and none may read its gradient (else nothing)."""
        if type(function) is not cst.FunctionDef or holders(bindings, names, self.imports.qualify) & self._escaped(facts):
            return []
        positions = return_positions(self.names.returns.get(function, []), names)
        callers = caller_bindings(self.losses, function, positions) if positions else None
        found = []
        for caller, name in callers or ():
            loss = self.unread_target({name}, caller)
            if loss is None:
                return []
            found.append(loss)
        return found

    def _forward_marks(self, call: cst.Call) -> list[Effect]:
        """`criterion(pred, y)` where `criterion` holds an instance of a module class of another scanned file whose
        `forward` makes a parameter require grad in place: those marks, spelled as this call passes them."""
        if type(call.func) is not cst.Name or call.func not in self.names.uses or self.losses.operands(call) is None:
            return []
        built = self.names.single_value(call.func)
        if type(built) is not cst.Call or self.names.definition_of(built) is not None:
            return []
        owner = self.summaries.of_call(built)
        forward = owner.method("forward") if isinstance(owner, ClassSummary) else None
        if forward is None or owner.method("__call__") is not None:
            return []
        marks = []
        for effect in forward.effects:
            if effect.kind != "requires_grad" or effect.target not in forward.parameters:
                continue
            arg = next((a for a in call.args if parameter_receiving(forward, call, a) == effect.target), None)
            if arg is not None and type(arg.value) is cst.Name:
                marks.append(replace(effect, target=arg.value.value))
        return marks

    def marked_by_callees(self) -> Iterator[tuple[cst.Call, str, LossOperands]]:
        """`helper(y)` where `helper` (of this file, or of another scanned file) makes its parameter require grad
        in place, any number of calls deep: each call, the argument's name and the loss it is then the target of
        with nothing reading its gradient (unless the scope's own caller handed the tensor in)."""
        for call, scope in self.calls:
            marked = [effect for effect in self.summaries.effects_at(call) or self._forward_marks(call)
                      if effect.kind == "requires_grad" and effect.target is not None and "." not in effect.target]
            if not marked:
                continue
            facts, bindings = self.scope_facts(scope)
            own = {b.name for b in bindings if b.kind in ("assign", "walrus")}
            for effect in marked:
                names = plain_aliases(bindings, {effect.target}, self.imports.qualify)  # type: ignore[arg-type]
                if names & facts.parameters and effect.target not in own:
                    continue  # the caller's own caller handed the tensor in: it may read the gradient
                loss = self._unread(names, facts, bindings, shown=(call,))
                if loss is not None:
                    yield call, effect.target, loss  # type: ignore[misc]

    def returned_requiring_grad(self) -> Iterator[tuple[cst.Name, LossOperands]]:
        """`x, y = prepare(batch)` where `prepare` (of this file, or of another scanned file) returns `y` made to
        require grad, however it spells it, any number of calls deep: each loss target and its loss, when nothing
        in the caller may read its gradient."""
        for site, loss in self.losses.loss_sites():
            target = loss.target
            if type(target) is not cst.Name or site.outer is None:
                continue
            returned = self.summaries.returned_to(target)
            if returned is None or not returned.made_to_require_grad:
                continue
            # handed to the helper that returns it: shown by its summary
            shown = tuple(b.value for b in self.names.reaching(target) if type(b.value) is cst.Call)
            if self.unread_target({target.value}, site.outer, shown) is loss:
                yield target, loss

    def marked_in_loss_definitions(self) -> Iterator[tuple[GradRequest, LossOperands]]:
        """A loss of this file that makes the parameter receiving its target require grad, itself or a copy it
        rebinds the parameter to: `criterion(model(x), y)` where `criterion` holds an instance of a loss class
        whose `forward` does, or a hand-written objective function of the file whose result the caller
        backpropagates (`weighted_bce(model(x), y, w)`, compared by arithmetic: `objective_targets`). Each such
        request with the caller's loss, when nothing in the definition reads that gradient (not differentiated,
        returned or handed on) and nothing in the caller reads the gradient of what it hands in."""
        by_scope = self.by_scope()
        seen: set[int] = set()
        for call, scope in self.calls:
            resolved = _loss_definition(self.names, self.summaries, call)
            requests = by_scope.get(resolved[0], []) if resolved is not None else []
            if not requests:
                continue
            definition, skip = resolved  # type: ignore[misc]
            operands = self.losses.operands(call)
            if operands is not None and operands.target is None:
                continue
            arguments = [operands.target] if operands is not None else [a.value for a in call.args if not a.star]
            facts, bindings = self.scope_facts(definition)
            for argument in arguments:
                parameter = receiving_parameter(call, argument, definition, skip)  # type: ignore[arg-type]
                if parameter is None:
                    continue
                received = self.aliases(bindings, {parameter})
                for request in requests:
                    names = self.aliases(bindings, set(request.names))
                    if id(request.node) in seen or request.inline or not names & received:
                        continue
                    if names & facts.differentiated or names & facts.returned or self._handed_on(names, facts, bindings):
                        continue
                    roots = target_roots(argument, self.imports)  # type: ignore[arg-type]
                    loss = self.unread_target(roots, scope, shown=(call,)) if roots else None
                    if loss is None or loss.call is not call:
                        continue
                    seen.add(id(request.node))
                    yield request, loss

    def _handed_on(self, names: set[str], facts: GradientUse, bindings: list[Binding]) -> bool:
        """The tensor reaches code that may read its gradient (not arithmetic of a function of the file)."""
        pure = self.objectives.pure_call if self.objectives is not None else None
        return bool(holders(bindings, names, self.imports.qualify) & self._escaped(facts, (), pure))


def _loss_definition(names: Names, summaries: Summaries, call: cst.Call) -> Optional[tuple[cst.FunctionDef, int]]:
    """The `def` a loss call runs, with the leading parameters it does not pass: a function of the file,
    or the `forward` of a class of the file whose instance the called name holds (`criterion = DiceLoss()`,
    `self.criterion = DiceLoss()` in the class's methods)."""
    own = names.definition_of(call)
    if own is not None:
        return own, 0
    func = call.func
    values: list[cst.BaseExpression] = []
    kind = type(func)  # exact types (libcst has no subclass of them): asked of every call of the file
    if kind is cst.Name and func in names.uses:
        value = names.single_value(func)  # type: ignore[arg-type]
        values = [value] if value is not None else []
    elif kind is cst.Attribute:
        values = [b.value for b in names.self_attribute_bindings(func) if b.value is not None]  # type: ignore[arg-type]
        if len(values) == 1 and type(values[0]) is cst.Name:
            values = _constructed_with(names, summaries, values[0])  # type: ignore[arg-type]
    if len(values) != 1 or type(values[0]) is not cst.Call:
        return None
    built = names.instance_of(values[0])
    if built is None or built.kind != "function" or type(built.node) is not cst.FunctionDef:
        return None
    return built.node, 1

def _constructed_with(names: Names, summaries: Summaries, name: cst.Name) -> list[cst.BaseExpression]:
    """`self.criterion = criterion` of a constructor: the one loss object of a class of the file that the
    file's constructions pass for the parameter (`Regressor(net, criterion=ReflectiveLoss())`, through a
    name, or one branch of `A() if flag else nn.MSELoss()` whose other branch is torch's own loss, which
    never marks its target). Empty when the constructions do not show one."""
    bindings = names.reaching(name)
    passed = summaries.passed_for(bindings[0]) if len(bindings) == 1 and bindings[0].kind == "param" else None
    candidates: list[cst.BaseExpression] = []
    for value in passed or []:
        if type(value) is cst.Name and value in names.uses:
            value = names.single_value(value)
        branches = [value.body, value.orelse] if type(value) is cst.IfExp else [value]
        for branch in branches:
            if type(branch) is not cst.Call:
                return []
            if not (names.qualify(branch.func) or "").startswith("torch.nn."):
                candidates.append(branch)
    built = {id(names.instance_of(c).node) for c in candidates if names.instance_of(c) is not None}
    return candidates[:1] if len(built) == 1 and len(candidates) == len(passed or []) else []
