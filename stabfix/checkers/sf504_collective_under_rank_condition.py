"""SF504 collective-under-rank-condition: a collective only some ranks reach; the others wait forever.

A query over the model's `distributed` part (which tests depend on the rank) and the collectives
(`calls/collectives.py`, and a helper's `collective` effect in its summary: a function of this file or of
another file of the scan that runs one, any number of calls down). A collective is reported when:
- it sits in a branch of an `if` whose test varies by rank (`Distributed.varies_by_rank`: `rank == 0`,
  `dist.get_rank() != 0`, `is_main_process()`, `accelerator.is_main_process`, `local_rank in [-1, 0]`) and
  the other branch runs no collective of the same kind;
- an earlier statement of the same function (or loop) leaves it on some ranks only: an `if` on the rank
  whose branch ends in `return`/`raise` (or `break`/`continue`, when the collective is in that loop);
- its function is decorated to run on rank 0 only (`@rank_zero_only`, `@accelerator.on_main_process`).
Left alone: one half of a pair whose other half reaches the ranks it misses (`domain/rank_splits.py`: the
paired-barrier idiom, also across a context manager's `__enter__`/`__exit__`; a collective in the body of an
`if <rank test>: ... return` and one of the same kind after it), a test of the world size, of
`dist.is_initialized()` or of `local_rank != -1` (distributed mode), rank-0-only code without collectives.

No fix: where the collective belongs depends on what it was for; the message names it and the condition.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.calls.collectives import FRAMEWORK_METHODS, MODULE_COLLECTIVES, collective_api
from stabfix.model.domain.distributed import Distributed
from stabfix.model.domain.rank_splits import RankSplits, kind
from stabfix.model.domain.ranks import MAIN_DECORATORS
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import children
from stabfix.shape import Shape
from stabfix.shape_names import callees_spell
from stabfix.shape_queries import may_be_collective

# the last names of every collective `collective_api` knows: one of them is spelled in a file that runs one itself
COLLECTIVE_WORDS = frozenset(name.rsplit(".", 1)[-1] for name in MODULE_COLLECTIVES) | FRAMEWORK_METHODS


class CollectiveUnderRankCondition(Checker):
    code = "SF504"
    # a rank condition is always part of a finding (the collective may be a helper's, of any name)
    tokens = ("rank", "is_main", "main_process", "master", "global_zero", "process_zero", "process_index")
    needs = ("distributed", "summaries")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a call in a branch of an `if` of its function, after an `if` that leaves early, or in a rank-0-only function;
        # and a collective: a call of the file that may be one (its own or its helpers'), or one in the file of another
        # file's helper a call of this file may run (the summaries follow it one file away; a callee outside the scan runs none)
        placed = shape.early_exits() or bool(shape.decorated(*MAIN_DECORATORS)) or any(map(shape.in_branch, shape.all_calls()))
        return placed and (any(may_be_collective(shape, call) for call in shape.calls(*shape.spellings(*COLLECTIVE_WORDS)))
                           or callees_spell(shape, COLLECTIVE_WORDS))

    def __init__(self, context) -> None:
        super().__init__(context)
        self._exits: dict[tuple[int, int], Optional[tuple[cst.CSTNode, str]]] = {}
        self._first_pass: dict[int, Optional[tuple[cst.CSTNode, str]]] = {}  # node ids -> `_condition(.., None)` from there

    def leave_Module(self, original_node: cst.Module) -> None:
        distributed = self.model.distributed
        # the rank condition first: it is syntax, while what a call runs may take other files' summaries
        held_back = [call for call in distributed.flows.calls() if self._condition(distributed, call, None) is not None]
        sites = [(call, api) for call in held_back if (api := self._collective(call)) is not None]
        conditioned = [(call, api, self._condition(distributed, call, api)) for call, api in sites]
        splits = RankSplits(distributed.flows, self.model.summaries)
        for call, api, found in conditioned:
            if found is None:
                continue
            node, how = found
            if splits.completes(call, api, node, conditioned):
                continue  # one half of a pair: the ranks it misses reach the other (`domain/rank_splits.py`)
            self.report(call, self._message(call, api, how))

    def _collective(self, call: cst.Call) -> Optional[str]:
        api = collective_api(call, self.model.names)
        if api is not None:
            return api
        effects = [e for e in self.model.summaries.effects_at(call) if e.kind == "collective" and e.detail]
        if not effects:
            return None
        inner = min(effects, key=lambda e: (e.depth, e.detail or ""))
        return f"{code_of(call.func, 60)}()|{inner.detail}"  # the helper called, and the collective it runs

    def _condition(self, distributed: Distributed, call: cst.Call,
                   api: Optional[str]) -> Optional[tuple[cst.CSTNode, str]]:
        """The rank condition that keeps some ranks from `call` (the node and its wording), or None; with no
        `api` the other branch is not looked into (a superset, for a first pass, which asks it of every call of
        the file: its answer from a node upward is kept for each node walked, and the next walk stops there)."""
        child, current, found, walked = call, distributed.flows.parent(call), None, []
        while current is not None:
            if api is None and id(child) in self._first_pass:
                found = self._first_pass[id(child)]
                break
            walked.append(id(child))
            stop, found = self._at(distributed, child, current, api)
            if stop:
                break
            child, current = current, distributed.flows.parent(current)
        if api is None:
            self._first_pass.update(dict.fromkeys(walked, found))
        return found

    def _at(self, distributed: Distributed, child: cst.CSTNode, current: cst.CSTNode,
            api: Optional[str]) -> tuple[bool, Optional[tuple[cst.CSTNode, str]]]:
        """One step of `_condition`'s walk up, from `child` to `current`: whether it stops here, and what it found."""
        # exact types (libcst has no subclass of them): asked of every node above every call, where a failing
        # `isinstance` on a libcst class goes through `ABCMeta.__instancecheck__`
        kind = type(current)
        in_else = kind is cst.If and child is current.orelse  # type: ignore[attr-defined]
        if kind is cst.If and (child is current.body or in_else) and distributed.varies_by_rank(current.test) \
                and not (in_else and type(current.test) is cst.BooleanOperation):  # `else` of `A and rank == 0`: A decides too
            other = current.orelse if child is current.body else current.body
            if not self._runs(other, api) and not self._other_side_of_split(distributed, current, api):
                branch = "under" if child is current.body else "in the `else` of"
                return True, (current, f"{branch} `if {code_of(current.test, 60)}:`")
        if kind is cst.IndentedBlock or kind is cst.Module:
            early = self._early_exit(distributed, current, child)
            if early is not None:
                return True, early
        if kind is cst.FunctionDef:
            return True, self._decorated(current)  # type: ignore[arg-type]
        return False, None

    def _early_exit(self, distributed: Distributed, block: cst.CSTNode,
                    statement: cst.CSTNode) -> Optional[tuple[cst.CSTNode, str]]:
        """An earlier `if <rank test>: ... return` in `block` (or `break`/`continue`: they belong to a loop
        around `block`, which holds the call too); asked for every call of the statement, answered once."""
        key = (id(block), id(statement))
        if key not in self._exits:
            self._exits[key] = self._first_early_exit(distributed, block, statement)
        return self._exits[key]

    def _first_early_exit(self, distributed: Distributed, block: cst.CSTNode,
                          statement: cst.CSTNode) -> Optional[tuple[cst.CSTNode, str]]:
        for item in block.body:
            if item is statement:
                return None
            if type(item) is not cst.If or not distributed.varies_by_rank(item.test):
                continue
            exits = {_exit_of(item.body), _exit_of(item.orelse) if item.orelse is not None else None}
            exits.discard(None)
            if len(exits) == 1 and item.orelse is not None and _exit_of(item.orelse) is not None:
                continue  # every rank leaves: the call is not reached at all
            for kind in exits:
                return item, f"after `if {code_of(item.test, 60)}: ... {kind}` (line {self.context.positions.line(item)})"
        return None

    def _decorated(self, function: cst.FunctionDef) -> Optional[tuple[cst.CSTNode, str]]:
        for decorator in function.decorators:
            target = decorator.decorator.func if type(decorator.decorator) is cst.Call else decorator.decorator
            name = target.attr.value if type(target) is cst.Attribute else getattr(target, "value", "")
            if name in MAIN_DECORATORS:
                return function, f"in `{function.name.value}()`, which `@{code_of(target, 60)}` runs on rank 0 only"
        return None

    def _other_side_of_split(self, distributed: Distributed, branch: cst.If, api: Optional[str]) -> bool:
        """`if rank == 0: gather(x, out) elif rank > 0: gather(x, None)`: the `elif` is the rest of the ranks, and the
        branch before it (rank 0 only) runs the same collective, so every rank reaches one."""
        chain = distributed.flows.parent(branch)
        return type(chain) is cst.If and chain.orelse is branch and self._runs(chain.body, api) \
            and {distributed.rank_zero_test(chain.test), distributed.rank_zero_test(branch.test)} == {True, False}

    def _runs(self, block: Optional[cst.CSTNode], api: Optional[str]) -> bool:
        """Whether `block` runs a collective of the same kind (`dist.broadcast` in both branches)."""
        if block is None or api is None:
            return False
        stack = [block]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call and (other := self._collective(node)) is not None \
                    and kind(other) == kind(api):
                return True
            stack.extend(children(node))
        return False

    def _message(self, call: cst.Call, api: str, how: str) -> str:
        helper, _, inner = api.rpartition("|")
        shown = f"`{helper}` (it runs the collective `{inner}()`)" if helper else f"collective `{inner}()`"
        return (f"{shown} runs {how}: only some ranks reach it and the others wait for them "
                "forever (the job hangs); call it on every rank, outside the rank condition")


def _exit_of(block: cst.BaseSuite) -> Optional[str]:
    statements = block.body if type(block) is cst.IndentedBlock else ()
    if type(block) is cst.Else:
        return _exit_of(block.body)
    if type(block) is cst.SimpleStatementSuite:
        statements = (block,)
    last = statements[-1] if statements else None
    if type(last) in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
        for small in last.body:
            for kind, cls in (("return", cst.Return), ("raise", cst.Raise), ("break", cst.Break), ("continue", cst.Continue)):
                if isinstance(small, cls):
                    return kind
    return None
