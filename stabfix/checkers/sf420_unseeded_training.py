"""SF420 unseeded-training: a training entry point that draws random numbers (weight initialisation,
dropout, a shuffling loader, `torch.rand*`) while no seed is set anywhere in the run's files.

A query over `randomness` (draws, seeds, the `__main__` guard, calls of other modules) and `events`
(backward passes and optimizer steps), asking the project index about the functions and classes the
file calls from the other files of the scan:
- an entry: the file has an `if __name__ == "__main__":` guard, is a package's `__main__.py`, or runs
  training at module level (a backward pass, or a call of a function that trains, outside every def);
- it trains: a backward pass and an optimizer step in the file, or in a function or class of another
  scanned file that it calls;
- randomness: a draw in the file, or in a function or class of another scanned file that it calls;
- no seed: the `seeding` fact (`model/domain/seeding.py`): no call of a seeding API in the file, in a
  function of another scanned file it calls (or further down), or at the top of a tree module it
  imports; a function imported from outside the scan whose name speaks of seeding counts as seeding
  (the tie-break towards silence), a function of the scan named so but seeding nothing does not.
Test files stay silent. One finding per file, on the guard (or the first module-level training line).
"""

from __future__ import annotations

import ast
from pathlib import PurePath
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.calls.events import Step, stepped_optimizer
from stabfix.model.domain.seeding import run_is_seeded
from stabfix.model.source.vocabulary import is_test_path
from stabfix.shape import Shape
from stabfix.shape_names import callees_spell

# the words a backward pass and an optimizer step of the file are spelled with (`calls/events.py`: `x.backward()`,
# `manual_backward`, `torch.autograd.backward`/`grad` however imported; `.step()`, `.optimizer_step()`)
BACKWARD_WORDS = frozenset({"backward", "manual_backward", "grad"})
STEP_WORDS = frozenset({"step", "optimizer_step"})
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # what `randomness` counts as owners of a call


class UnseededTraining(Checker):
    code = "SF420"
    tokens = ("__main__", "backward")
    needs = ("names", "optimizers", "events", "randomness")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # not a test file; an entry (`_entry`): a `__main__` guard, a package's `__main__.py`, or a call outside every
        # def and class (a module-level backward pass or call of a training function is one); and it trains: a backward
        # pass and a step spelled in the file (its own helpers' too), or in the file of a function or class of another
        # file of the scan a call of this one names through its imports (`_foreign`: one file away)
        if is_test_path(shape.path):
            return False
        words = shape.words
        entry = PurePath(shape.path).name == "__main__.py" or any(
            type(side) is ast.Constant and side.value == "__main__" for node in shape.nodes(ast.Compare)  # type: ignore[attr-defined]
            for side in (node.left, *node.comparators)) or shape.has_outside(ast.Call, DEFINITIONS)  # type: ignore[attr-defined]
        return entry and (not (BACKWARD_WORDS.isdisjoint(words) or STEP_WORDS.isdisjoint(words))
                          or callees_spell(shape, BACKWARD_WORDS, STEP_WORDS, kinds=("def", "class"), imports_only=True))

    def leave_Module(self, original_node: cst.Module) -> None:
        if is_test_path(self.context.path):
            return
        randomness = self.model.randomness
        where = self._entry(original_node)
        if where is None or not self._trains():
            return
        if run_is_seeded(randomness, self.model.project):
            return
        first = self._first_draw()
        if first is None:
            return
        self.report(where, _message(first))

    # -- the entry and its training ------------------------------------------------------------------
    def _entry(self, module: cst.Module) -> Optional[cst.CSTNode]:
        randomness = self.model.randomness
        if randomness.main_guard is not None:
            return randomness.main_guard
        at_module = [e for e in self.model.events.of_kind("backward") if e.site.function is None and e.site.cls is None]
        if at_module:
            return at_module[0].node
        for call in randomness.module_calls():
            if self._calls_training(call):
                return call
        if PurePath(self.context.path).name == "__main__.py" and module.body:
            return module.body[0]
        return None

    def _calls_training(self, call: cst.Call) -> bool:
        if type(call.func) is cst.Name:
            local = [d for d in self.model.events.of_kind("backward") if d.site.functions and d.site.functions[0].name.value == call.func.value]
            if local:
                return True
        qualified = self.model.imports.qualify(call.func)
        return qualified is not None and self._foreign(qualified, _trains_in) is True

    def _trains(self) -> bool:
        events = self.model.events
        steps = [s for s in events.of_kind("step") if isinstance(s, Step) and stepped_optimizer(s, self.model.optimizers, events)]
        if events.of_kind("backward") and steps:
            return True
        return any(self._foreign(q, _trains_in) is True for _, q in self.model.randomness.project_calls())

    # -- seeds and draws -------------------------------------------------------------------------------
    def _first_draw(self) -> Optional[str]:
        """The first random draw in words, with the line of this file that makes it or calls into it."""
        draws = self.model.randomness.draws()
        if draws:
            line = self._line(draws[0].node)
            return draws[0].what + (f" (line {line})" if line is not None else "")
        for call, qualified in self.model.randomness.project_calls():
            found = self._foreign(qualified, lambda d: (d.model.randomness.within(d.node, "draw") or [None])[0])
            if found is not None:
                line = self._line(call.node)
                called = f"; this file calls it on line {line}" if line is not None else ""
                return f"`{qualified.rsplit('.', 1)[-1]}` of another file, where {found.what}{called}"
        return None

    def _foreign(self, qualified: str, ask):
        project = self.model.project
        if project is None:
            return None
        return project.foreign(qualified, ask, needs=("names", "optimizers", "events", "randomness"), kinds=("def", "class"))

    def _line(self, node: cst.CSTNode) -> Optional[int]:
        if self.context.module is None:
            return None
        found = self.context.positions.get(node)
        return found.start.line if found is not None else None


def _trains_in(definition) -> bool:
    """A function or class of another file with a backward pass and an optimizer step in it."""
    events = definition.model.events
    if events is None:
        return False
    node = definition.node
    mine = [e for e in events.events if node in e.site.functions or e.site.cls is node]
    return any(e.kind == "backward" for e in mine) and any(e.kind == "step" for e in mine)



def _message(draw: str) -> str:
    return (
        f"this entry point trains a model and uses randomness ({draw}) but no seed is set in it or in "
        "the project code it calls, so two runs start from different weights and batches and a result cannot be "
        "reproduced or bisected; seed torch, numpy and random at the start (`torch.manual_seed(seed)`, "
        "`np.random.seed(seed)`, `random.seed(seed)`) and give the loader a seeded `generator=`"
    )
