"""Collectives that complete each other across a rank split: each rank reaches one of them, so none waits forever.

SF504 reports a collective that only some ranks reach (under a rank test, after an early exit of the other ranks).
Some such sites are one half of a pair, and the ranks the one misses reach the other, of the same kind:

- the paired-barrier idiom: a barrier under one rank test and the same barrier under another rank test of the same
  run unit (`ValueFlows.run_unit`: a function, or the `__enter__`/`__exit__` of one context manager, which a `with`
  runs both): rank 0 works first, the others wait at their own barrier;
- a split by an early exit: `if <rank test>: ... return` whose body runs a collective, and one of the same kind after
  the `if` (`if not main: serve(); return` ... `stop()`): the ranks the test holds on run the first and leave, the
  others run the second.

A site is `(call, api, found)`: the call, what it runs (`dist.barrier`, or `helper()|dist.barrier` for a helper
whose summary runs one) and the rank condition SF504 found for it (`(node, wording)`, or None). A helper's kinds are
every collective its summary runs (`serve()` scatters and gathers): the pair needs one kind in common.
Ask: `completes(call, api, condition, sites)`.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.flow.flows import ValueFlows
from stabfix.model.functions.summaries import Summaries
from stabfix.model.source.syntax import contains

BARRIERS = ("barrier", "monitored_barrier", "wait_for_everyone")

Site = tuple[cst.Call, str, Optional[tuple[cst.CSTNode, str]]]


def kind(api: str) -> str:
    """`dist.all_reduce` and `foo()|dist.all_reduce` (a helper running it) are both `all_reduce`."""
    return api.rpartition("|")[2].rsplit(".", 1)[-1]


class RankSplits:
    def __init__(self, flows: ValueFlows, summaries: Summaries) -> None:
        self.flows = flows
        self.summaries = summaries

    def completes(self, call: cst.Call, api: str, condition: cst.CSTNode, sites: list[Site]) -> bool:
        """Whether another site reaches the ranks this one (kept from them by `condition`) misses."""
        return kind(api) in BARRIERS and self._paired_barrier(call, api, condition, sites) \
            or self._split_by_exit(call, api, condition, sites)

    def kinds(self, call: cst.Call, api: str) -> frozenset[str]:
        """The collective kinds a site runs: the API's, or every one a helper runs."""
        if "|" not in api:
            return frozenset({kind(api)})
        return frozenset(kind(e.detail) for e in self.summaries.effects_at(call) if e.kind == "collective" and e.detail)

    def _paired_barrier(self, call: cst.Call, api: str, condition: cst.CSTNode, sites: list[Site]) -> bool:
        unit = self.flows.run_unit(call)
        return any(other is not call and kind(other_api) == kind(api) and found is not None
                   and found[0] is not condition and self.flows.run_unit(other) is unit
                   for other, other_api, found in sites)

    def _split_by_exit(self, call: cst.Call, api: str, condition: cst.CSTNode, sites: list[Site]) -> bool:
        if type(condition) is not cst.If:
            return False
        inside, kinds = contains(condition.body, call), self.kinds(call, api)
        return any(other is not call and found is not None and found[0] is condition
                   and contains(condition.body, other) != inside and kinds & self.kinds(other, other_api)
                   for other, other_api, found in sites)
