"""Where a file builds a whole log-softmax only to pick one entry per row from it: a gather (`.gather`,
`torch.gather`, `take_along_dim`) whose source is a log_softmax over the same dim, inline or through a name
(`pick(call)`, `LogProbPick`); whether such a name is used for nothing but those picks (`picked_only`), a
name of the logits rebound between the log_softmax and a pick (`rebound`), and whether the log_softmax is
there for its precision (`kept`: a branch only half-precision logits reach, `dtype_gates`, or an autocast
region around it or around a same-file call of its function, `amp`). Facts about the logits expression:
`repeatable` (evaluated twice at no real cost) and `stem` (the word a name for it starts with). Asked by SF104.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls.numerics import VALUE_PRESERVING, Gather, LogSoftmax, dims_equal, gather_of, int_of, log_softmax_of, maybe_same_dim
from stabfix.model.domain.dtype_gates import known_dtypes, only_half
from stabfix.model.source.names import Binding
from stabfix.model.source.syntax import walk
from stabfix.model.training.step_frames import Frame, FunctionFrame


@dataclass
class LogProbPick:
    gather: Gather
    log_softmax: LogSoftmax
    binding: Optional[Binding]  # `lp = F.log_softmax(...)`, when the source is a name
    assumed: bool = False  # softmax dim -1, gather dim 2: the same axis only for a rank-3 tensor
    kept: Optional[str] = None  # "half" / "autocast": log_softmax is there for its precision


class LogProbPicks:
    def __init__(self, names, amp) -> None:
        self.names = names
        self.amp = amp
        self._uses_by_name: Optional[dict[str, list[cst.Name]]] = None
        self._reads: dict[str, dict[int, list[cst.Name]]] = {}  # see `_reads_of_name`
        self._reads_targets: Optional[set[int]] = None

    def pick(self, call: cst.Call) -> Optional[LogProbPick]:
        """The gather `call` picks from a full log_softmax over its own dim (or, `assumed`, one that may be)."""
        gather = gather_of(call, self.names)
        if gather is None or gather.source is None or gather.index is None or gather.dim is None:
            return None
        log_softmax = log_softmax_of(gather.source, self.names)
        if log_softmax is None or int_of(gather.dim) == 0:
            return None  # a softmax over dim 0 (the batch): not one pick per row of a vocabulary
        assumed = not dims_equal(log_softmax.dim, gather.dim)
        if assumed and not maybe_same_dim(log_softmax.dim, gather):
            return None  # a gather along another axis than the softmax's
        binding = None
        if type(gather.source) is cst.Name:
            reaching = self.names.reaching(gather.source)
            binding = reaching[0] if len(reaching) == 1 else None
            if binding is None:
                return None
        elif type(gather.source) is not cst.Call:
            return None  # `self.lp` set elsewhere: other methods may use it whole
        return LogProbPick(gather, log_softmax, binding, assumed)

    def kept(self, log_softmax: LogSoftmax, frames: tuple[Frame, ...], place: tuple) -> Optional[str]:
        """Why this log_softmax, at a site with these frames and place, is there for its precision
        ("half", "autocast"), if it is."""
        if only_half(known_dtypes(log_softmax.operand, frames, place, self.names)):
            return "half"
        if self.amp.autocast_around(frames, place) is not None:
            return "autocast"
        function = next((frame.node for frame in reversed(frames) if isinstance(frame, FunctionFrame)), None)
        if function is not None and self.amp.called_under_autocast(function) is not None:
            return "autocast"
        return None

    def picked_only(self, binding: Binding, picks: list[LogProbPick], targets: set[int]) -> bool:
        """The log-probs' name is read by these picks and nothing else (no entropy, no KL on the whole
        tensor); `targets`: the ids of the names the file writes to."""
        uses = self._reads_of_name(binding.name, targets).get(id(binding), ())
        return {id(use) for use in uses} == {id(pick.gather.source) for pick in picks}

    def _reads_of_name(self, name: str, targets: set[int]) -> dict[int, list[cst.Name]]:
        """Binding id -> the reads of `name` it reaches, for every binding of that name at once: asked per
        binding, a big file's many bindings of one name (`log_probs`) each went over all its uses."""
        if self._uses_by_name is None or self._reads_targets is not targets:
            self._uses_by_name = {}  # the file's uses grouped by name once
            for use in self.names.uses:
                self._uses_by_name.setdefault(use.value, []).append(use)
            self._reads, self._reads_targets = {}, targets
        reads = self._reads.get(name)
        if reads is None:
            reads = self._reads[name] = {}
            for use in self._uses_by_name.get(name, ()):
                if id(use) not in targets:
                    for reached in self.names.reaching(use):
                        reads.setdefault(id(reached), []).append(use)
        return reads

    def rebound(self, binding: Binding, picks: list[LogProbPick]) -> bool:
        """A name of the logits expression is bound again between the log_softmax and a pick."""
        for name in walk(picks[0].log_softmax.operand):
            if type(name) is not cst.Name or name not in self.names.uses:
                continue
            for other in self.names.bindings_of(name):
                if any(binding.order < other.order < self.names.uses[p.gather.source].order for p in picks):
                    return True
        return False


def repeatable(operand: cst.BaseExpression) -> bool:
    """Evaluating it twice gives the same tensor at no real cost: no calls but dtype casts and views."""
    for node in walk(operand):
        if type(node) is cst.Call:
            if not (type(node.func) is cst.Attribute and node.func.attr.value in VALUE_PRESERVING and not node.args):
                return False
        elif type(node) in (cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda):
            return False
    return True


def stem(operand: cst.BaseExpression) -> Optional[str]:
    """The word a name for the logits' logsumexp starts with: `out.logits[:, :-1].float()` -> `logits`."""
    while True:
        if type(operand) is cst.Call and type(operand.func) is cst.Attribute:
            operand = operand.func.value
        elif type(operand) is cst.Subscript:
            operand = operand.value
        elif type(operand) is cst.Attribute:
            return operand.attr.value
        elif type(operand) is cst.Name:
            return operand.value
        elif type(operand) is cst.BinaryOperation:
            operand = operand.left  # `student_logits / self.temperature`
        else:
            return None
