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
- `modules`     which callables are torch modules (calling one is a forward pass)
- `containers`  long-lived dicts/lists (state carried across steps): their stores, reads,
                evictions, clears and hand-overs (built on `steps`)

A checker reads the model; it never builds a part itself, so two rules that need the same fact
share one computation.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from stabfix.model.containers import Containers
from stabfix.model.imports import ImportTracker
from stabfix.model.modules import ModuleIndex
from stabfix.model.names import Names
from stabfix.model.optimizers import OptimizerTracker
from stabfix.model.structure import StepIndex
from stabfix.model.values import Values

PARTS = ("names", "values", "steps", "optimizers", "modules", "containers")
# A part that is built from others: asking for it builds those too.
_REQUIRES = {"values": ("names", "modules"), "containers": ("steps", "names")}


class FileModel:
    def __init__(self, needs: Iterable[str] = ()) -> None:
        wanted = set(needs)
        unknown = wanted - set(PARTS)
        if unknown:
            raise ValueError(f"unknown model parts: {sorted(unknown)}")
        wanted |= {needed for part in wanted for needed in _REQUIRES.get(part, ())}
        self.imports = ImportTracker()
        self.names: Names | None = Names() if "names" in wanted else None
        self.steps: StepIndex | None = StepIndex(self.imports) if "steps" in wanted else None
        self.optimizers: OptimizerTracker | None = OptimizerTracker(self.imports) if "optimizers" in wanted else None
        self.modules: ModuleIndex | None = ModuleIndex(self.imports) if "modules" in wanted else None
        self.values: Values | None = (
            Values(self.names, self.modules) if self.names is not None and "values" in wanted else None
        )
        self.containers: Containers | None = (
            Containers(self.imports, self.steps, self.names)
            if self.steps is not None and self.names is not None and "containers" in wanted
            else None
        )

    def visitors(self) -> list[cst.BatchableCSTVisitor]:
        """The parts to run ahead of the checkers, in dependency order."""
        parts: list[cst.BatchableCSTVisitor | None] = [
            self.imports, self.names, self.steps, self.optimizers, self.modules, self.containers
        ]
        return [part for part in parts if part is not None]
