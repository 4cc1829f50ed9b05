"""SF104 full-vocab-logprob-materialization: `log_softmax(logits, -1).gather(-1, ids)`.

A query over the `log_prob_picks` part: a gather (`.gather`, `torch.gather`, `take_along_dim`)
whose source is a log_softmax over the same dim (inline, or through a name that is used for nothing else)
builds the whole log-prob tensor (and its gradient) to pick one entry per row. Fix (unsafe: it rounds
differently in bf16/fp16): `logits.gather(dim, ids) - logits.logsumexp(dim, keepdim=True)`, when the
logits expression can be evaluated twice (no calls but dtype casts) and log_softmax does not cast
(`dtype=`); a named log-prob tensor becomes the logits' logsumexp, computed once in its place.
No fix where log_softmax is kept on purpose for its precision: in a branch that only half-precision
logits reach (`dtype_gates`: the `else` of `if logits.dtype in [torch.float32, torch.float64]:`), and
under autocast (`amp`: a `with`/decorator region around it or around a same-file call of its function),
where CUDA runs log_softmax in float32 and the fused ops in the logits' dtype.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.calls.numerics import int_of
from stabfix.model.domain.log_prob_picks import LogProbPick as _Candidate, repeatable as _repeatable, stem as _stem
from stabfix.model.source.names import Binding
from stabfix.model.source.node_fields import code_nodes
from stabfix.model.source.syntax import code_of, node_code as _source
from stabfix.model.training.step_frames import Frame
from stabfix.text_gates import words_of

# the fused form rounds the logsumexp in the logits' dtype: its error is relative to the logits' size,
# not to the log-prob's (measured and bounded in tests/test_sf104_equivalence.py)
_ROUNDING = "rounds relative to the logits' size: not the same values in bf16/fp16"


class FullVocabLogprobMaterialization(Checker):
    code = "SF104"
    tokens = ("gather", "take_along_dim")
    also_needs = (("log_softmax", "LogSoftmax"),)
    needs = ("names", "steps", "amp", "log_prob_picks")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.calls: list[cst.Call] = []
        self.bare: set[int] = set()  # calls that need no parentheses once they become `a - b`
        self.targets: set[int] = set()  # names written to, not read
        self.new_names: set[str] = set()  # names the fixes bind
        self.sites: dict[int, tuple[tuple[Frame, ...], tuple]] = {}  # call -> its frames and place

    def visit_Call(self, node: cst.Call) -> None:
        steps = self.model.steps
        self.sites[id(node)] = (steps.frames(), steps.place())
        # `x.gather`, `torch.gather`, `from torch import gather as g`: `gather_of` decides in leave_Module
        func = node.func
        kind = type(func)  # exact types (see node_fields.node_kinds): every call of the file comes here
        if kind is cst.Name or (kind is cst.Attribute and func.attr.value in ("gather", "take_along_dim")):
            self.calls.append(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target  # mostly a name, which holds no other (nor does any whitespace or punctuation)
        names = (target,) if type(target) is cst.Name else code_nodes(target)
        self.targets.update(id(name) for name in names if type(name) is cst.Name)

    def _spot(self, node) -> None:
        if getattr(node, "value", None) is not None:
            self.bare.add(id(node.value))

    visit_Assign = visit_AnnAssign = visit_AugAssign = visit_Return = visit_Arg = _spot

    def leave_Module(self, original_node: cst.Module) -> None:
        by_binding: dict[int, list[_Candidate]] = {}
        picks = self.model.log_prob_picks
        for call in self.calls:
            candidate = picks.pick(call)
            if candidate is None:
                continue
            # why the log_softmax is there for its precision, at its site's frames and place
            candidate.kept = picks.kept(candidate.log_softmax, *self.sites.get(id(candidate.log_softmax.call), ((), ())))
            if candidate.binding is None:
                self.report(call, _message(candidate), self._fix([candidate], None))
            else:
                by_binding.setdefault(id(candidate.binding), []).append(candidate)
        for group in by_binding.values():
            binding = group[0].binding
            if not picks.picked_only(binding, group, self.targets):
                continue  # the log-probs are used whole too (entropy, KL): the full tensor is needed anyway
            fix = self._fix(group, binding)
            for candidate in group:
                self.report(candidate.gather.call, _message(candidate), fix)

    # --- fix --------------------------------------------------------------------------------------------
    def _fix(self, group: list[_Candidate], binding: Optional[Binding]) -> Optional[Fix]:
        log_softmax = group[0].log_softmax
        if log_softmax.casts or log_softmax.wrapped or not _repeatable(log_softmax.operand) or group[0].kept:
            return None
        changes: dict[cst.CSTNode, object] = {}
        normalizer = None
        if binding is not None:
            # the log-probs' name becomes the logits' logsumexp, computed once where the log_softmax was
            # (its comments stay), and every gather subtracts it
            bound = self._logsumexp_binding(group, binding)
            if bound is None:
                return None
            normalizer, assign = bound
            changes[binding.node] = assign
        for candidate in group:
            changes[candidate.gather.call] = self._rewrite(candidate, normalizer)
        description = f"gather from the logits and subtract their logsumexp ({_ROUNDING})"
        if any(candidate.assumed for candidate in group):
            description += "; the same axis only if the dims are one"
        return Fix("unsafe", description, changes)

    def _logsumexp_binding(self, group: list[_Candidate], binding: Binding) -> Optional[tuple[str, cst.Assign]]:
        """`lp = F.log_softmax(logits, -1)` -> (`logits_logsumexp`, `logits_logsumexp = logits.logsumexp(-1, keepdim=True)`)."""
        assign, log_softmax = binding.node, group[0].log_softmax
        if (
            binding.kind != "assign"
            or type(assign) is not cst.Assign
            or len(assign.targets) != 1
            or type(assign.targets[0].target) is not cst.Name
            or assign.value is not log_softmax.call
            or self.model.log_prob_picks.rebound(binding, group)
        ):
            return None
        dim = log_softmax.dim
        if dim is None or not any(arg.value is dim for arg in log_softmax.call.args):
            # the dim is spelled elsewhere (an `nn.LogSoftmax(dim=...)` module): only a literal carries over
            dim = next((d for d in (log_softmax.dim, group[0].gather.dim) if int_of(d) is not None), None)
            if dim is None:
                return None
        name = self._fresh_name(f"{_stem(log_softmax.operand) or 'logits'}_logsumexp")
        # built, not parsed (a parse costs a big file's every fix): the same code as `name = <value>` parsed
        value = parsed_expression(f"{_parenthesized(log_softmax.operand)}.logsumexp({_source(dim)}, keepdim=True)")
        return name, cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)

    def _fresh_name(self, name: str) -> str:
        """`name`, or `name_2`, ... : one the file does not use yet, nor another of these fixes."""
        candidate, number = name, 1
        while candidate in self.new_names or self._in_text(candidate):
            number += 1
            candidate = f"{name}_{number}"
        self.new_names.add(candidate)
        return candidate

    def _in_text(self, word: str) -> bool:
        """The file spells `word` as a whole word (in the file's words, which the rules' text gates
        collected already: a search of the whole text per fix made a big file's fixes quadratic)."""
        if not re.fullmatch(r"\w+", word):
            return re.search(rf"\b{re.escape(word)}\b", self.context.text) is not None
        return word in words_of(self.context.text)

    def _rewrite(self, candidate: _Candidate, normalizer: Optional[str]) -> cst.BaseExpression:
        gather, operand = candidate.gather, candidate.log_softmax.operand
        logits = _parenthesized(operand)
        if type(gather.call.func) is cst.Attribute and gather.call.func.value is gather.source:
            picked = gather.call.with_changes(func=gather.call.func.with_changes(value=parsed_expression(logits)))
        else:
            args = [arg.with_changes(value=parsed_expression(logits)) if arg.value is gather.source else arg
                    for arg in gather.call.args]
            picked = gather.call.with_changes(args=args)
        if normalizer is None:
            dim = candidate.log_softmax.dim if candidate.assumed else gather.dim
            normalizer = f"{logits}.logsumexp({_source(dim)}, keepdim=True)"
        # `picked - normalizer`, parenthesized unless bare: built, not parsed, the code `cst.parse_expression` would give
        parentheses = {} if id(gather.call) in self.bare else {"lpar": [cst.LeftParen()], "rpar": [cst.RightParen()]}
        return cst.BinaryOperation(left=picked, operator=cst.Subtract(), right=parsed_expression(normalizer), **parentheses)


def _parenthesized(operand: cst.BaseExpression) -> str:
    logits = _source(operand)
    if type(operand) not in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) and not operand.lpar:
        return f"({logits})"
    return logits


def _message(candidate: _Candidate) -> str:
    gather, log_softmax = candidate.gather, candidate.log_softmax
    logits = code_of(log_softmax.operand, limit=40)
    if type(log_softmax.operand) not in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) and not log_softmax.operand.lpar:
        logits = f"({logits})"
    dim = code_of(log_softmax.dim if candidate.assumed else gather.dim, limit=20)
    where = f"`{candidate.binding.name}`" if candidate.binding is not None else f"`{code_of(log_softmax.call, limit=50)}`"
    advice = f"gather from `{logits}` and subtract `{logits}.logsumexp({dim}, keepdim=True)`"
    fused = f"the fused form (`{logits}.gather` minus `{logits}.logsumexp`)"
    if candidate.kept == "half":
        advice = f"this branch runs only for bf16/fp16 `{logits}`, where {fused} is less precise: no fix; process fewer rows at a time"
    elif candidate.kept == "autocast":
        advice = (f"it runs under autocast, which computes log_softmax in float32 on CUDA but {fused} in the logits' dtype: "
                  "no fix; process fewer rows at a time")
    elif log_softmax.casts:
        advice = f"cast `{logits}` first, then {advice}"
    elif not _repeatable(log_softmax.operand):
        advice = f"bind `{logits}` to a name, then {advice}"
    if candidate.assumed and not candidate.kept:
        advice += f" (the same values when dim {code_of(gather.dim, limit=20)} is the last axis)"
    return f"{where} is a full log-softmax of `{logits}`, built (with its gradient) only to pick one entry per row here; {advice}"
