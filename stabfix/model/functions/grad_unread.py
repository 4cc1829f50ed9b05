"""The third half of the function summaries: the positional parameters whose gradient a function never
reads (`UnreadFacts.grad_unread`), built on demand with its own fixpoint (`fixpoint.py`), apart from what
it returns (`returns.py`): a question about returns never pays for it, nor for the callees (and other
files) it follows a parameter into. Reads `gradients` and the returns half; the returns half never reads
this one, so a function's returns are settled before its unread parameters are built, as they are in the
last round of a build of both together. Asked through `summaries.py` (`Summaries.grad_unread_at`,
`FunctionSummary.grad_unread`)."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from stabfix.model.flow.gradient_use import GradientFacts, holders
from stabfix.model.functions.fixpoint import Fixpoint, Frame
from stabfix.model.functions.returns import parameter_receiving
from stabfix.model.functions.summary_facts import CallSummaries, ReturnFacts, UnreadFacts
from stabfix.model.source.imports import ImportTracker


class UnreadSummaries:
    def __init__(self, summaries: CallSummaries, imports: ImportTracker, gradients: Optional[GradientFacts],
                 returns: Callable[[cst.FunctionDef], ReturnFacts]) -> None:
        self.summaries = summaries
        self.imports = imports
        self.gradients = gradients
        self.returns = returns  # the returns half of a function of this file
        self.fixpoint: Fixpoint[UnreadFacts] = Fixpoint(self._build, UnreadFacts())

    def of(self, function: cst.FunctionDef) -> UnreadFacts:
        return self.fixpoint.of(function)

    def grad_unread_at(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`arg` goes to a function (of this file or another scanned file) whose summary shows it never
        reads the receiving parameter's gradient."""
        summary = self.summaries.function_of_call(call)
        if summary is None:
            return False
        parameter = parameter_receiving(summary, call, arg)
        return parameter is not None and parameter in summary.grad_unread

    def _build(self, function: cst.FunctionDef, frame: Frame) -> UnreadFacts:
        """The positional parameters whose gradient `function` shows it never reads: not differentiated
        (`.grad`, `autograd.grad`, an optimizer), not stored or handed to code the file does not show,
        handed on only to functions whose summaries say the same of the receiving parameter, and
        returned, if at all, only as whole elements the caller gets back (`ValueFacts.parameter`), where
        the caller's own facts follow it. Known only for an outermost function (its gradient facts)."""
        if self.gradients is None or function not in self.gradients.scopes:
            return UnreadFacts()
        _, parameters = self.summaries.callers.signature(function)
        facts = self.gradients.of(function)
        bindings = self.gradients.bindings_in(function)
        passed_back = {fact.parameter for fact in self.returns(function).returns if fact.parameter is not None}
        unread = []
        for parameter in parameters:
            if any(b.name == parameter and b.kind != "param" for b in bindings):
                continue  # what the name holds later is not (only) the caller's tensor
            held = holders(bindings, {parameter}, self.imports.qualify)
            if held & facts.differentiated or held & facts.stored:
                continue
            if held & facts.returned and parameter not in passed_back:
                continue  # returned under another name or inside a container
            if any(not self.grad_unread_at(call, arg) for call, arg in facts.handed(held)):
                continue
            unread.append(parameter)
        return UnreadFacts(tuple(unread))
