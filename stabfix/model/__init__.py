"""The model of one file's training code that every rule queries.

Built from the engine's one libcst parse, in the same single traversal as the checkers, and only
the parts the selected rules declare in `needs` (a file no rule can fire on is never parsed):

- `imports`     what an imported name or attribute chain stands for (always built; it is cheap)
- `names`       every name use to its bindings, in Python's scopes; `self.<attr>` across methods
- `values`      what an expression is, where it lives and whether it is cut from autograd
                (queried after the traversal; built on `names`)
- `steps`       training structure: step loops and functions, and the gates that make code run
                on only some steps
- `optimizers`  which expressions are optimizers, and what they were built from
- `memory`      what statements do to device memory: cache flushes (through aliases and the file's
                own wrappers), cleanup blocks in canonical form, phase boundaries (model swaps)
                (queried after the traversal; built on `names`)
- `events`      training events in source order (backward, optimizer steps, gradient clears and
                writes, clipping, unscaling, in-place parameter updates, optimizer constructions),
                each with its site: function, loops, branches, blocks; it builds `names` too

A checker reads the model; it never builds a part itself, so two rules that need the same fact
share one computation.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from stabfix.model.cleanup import DeviceMemory
from stabfix.model.events import Events
from stabfix.model.imports import ImportTracker
from stabfix.model.names import Names
from stabfix.model.optimizers import OptimizerTracker
from stabfix.model.structure import StepIndex
from stabfix.model.values import Values

PARTS = ("names", "values", "steps", "optimizers", "events", "memory")
# Parts built from another part: asking for one builds what it reads too.
_REQUIRES = {"values": ("names",), "events": ("names",), "steps": ("names",), "memory": ("names",)}


class FileModel:
    def __init__(self, needs: Iterable[str] = ()) -> None:
        wanted = set(needs)
        unknown = wanted - set(PARTS)
        if unknown:
            raise ValueError(f"unknown model parts: {sorted(unknown)}")
        for part in list(wanted):
            wanted.update(_REQUIRES.get(part, ()))
        self.imports = ImportTracker()
        self.names: Names | None = Names() if "names" in wanted else None
        self.steps: StepIndex | None = StepIndex(self.imports, self.names) if "steps" in wanted else None
        self.optimizers: OptimizerTracker | None = OptimizerTracker(self.imports) if "optimizers" in wanted else None
        self.values: Values | None = Values(self.names) if self.names is not None and "values" in wanted else None
        self.memory: DeviceMemory | None = (
            DeviceMemory(self.imports, self.names) if self.names is not None and "memory" in wanted else None
        )
        self.events: Events | None = Events(self.imports, self.names) if self.names is not None and "events" in wanted else None

    def visitors(self) -> list[cst.BatchableCSTVisitor]:
        """The parts to run ahead of the checkers, in dependency order."""
        parts: list[cst.BatchableCSTVisitor | None] = [self.imports, self.names, self.steps, self.optimizers, self.events]
        return [part for part in parts if part is not None]
