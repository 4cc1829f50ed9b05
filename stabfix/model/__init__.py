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

A checker reads the model; it never builds a part itself, so two rules that need the same fact
share one computation.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from stabfix.model.imports import ImportTracker
from stabfix.model.names import Names
from stabfix.model.optimizers import OptimizerTracker
from stabfix.model.structure import StepIndex
from stabfix.model.values import Values

PARTS = ("names", "values", "steps", "optimizers")
# A part that is built from another one: asking for it builds that one too.
_REQUIRES = {"values": "names"}


class FileModel:
    def __init__(self, needs: Iterable[str] = ()) -> None:
        wanted = set(needs)
        unknown = wanted - set(PARTS)
        if unknown:
            raise ValueError(f"unknown model parts: {sorted(unknown)}")
        wanted |= {_REQUIRES[part] for part in wanted if part in _REQUIRES}
        self.imports = ImportTracker()
        self.names: Names | None = Names() if "names" in wanted else None
        self.steps: StepIndex | None = StepIndex(self.imports) if "steps" in wanted else None
        self.optimizers: OptimizerTracker | None = OptimizerTracker(self.imports) if "optimizers" in wanted else None
        self.values: Values | None = Values(self.names) if self.names is not None and "values" in wanted else None

    def visitors(self) -> list[cst.BatchableCSTVisitor]:
        """The parts to run ahead of the checkers, in dependency order."""
        parts: list[cst.BatchableCSTVisitor | None] = [self.imports, self.names, self.steps, self.optimizers]
        return [part for part in parts if part is not None]
