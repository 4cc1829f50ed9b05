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
- `losses`      every call of the file, and which compute a loss with which prediction and target
                (built on `names`)
- `gradients`   per function: what is differentiated, returned or handed to unseen code (SF101)
- `tensors`     per scope: in-place changes, branch-bound names and loss sinks (SF401)

A checker reads the model; it never builds a part itself, so two rules that need the same fact
share one computation.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from stabfix.model.gradient_use import GradientFacts
from stabfix.model.imports import ImportTracker
from stabfix.model.losses import LossIndex
from stabfix.model.names import Names
from stabfix.model.optimizers import OptimizerTracker
from stabfix.model.structure import StepIndex
from stabfix.model.tensor_identity import TensorFacts
from stabfix.model.values import Values

PARTS = ("names", "values", "steps", "optimizers", "losses", "gradients", "tensors")
# A part that is built from others: asking for it builds those too.
_REQUIRES = {"values": ("names",), "losses": ("names",), "gradients": ("losses",), "tensors": ("losses",)}


class FileModel:
    def __init__(self, needs: Iterable[str] = ()) -> None:
        wanted = set(needs)
        unknown = wanted - set(PARTS)
        if unknown:
            raise ValueError(f"unknown model parts: {sorted(unknown)}")
        pending = list(wanted)
        while pending:
            for required in _REQUIRES.get(pending.pop(), ()):
                if required not in wanted:
                    wanted.add(required)
                    pending.append(required)
        self.imports = ImportTracker()
        self.names: Names | None = Names() if "names" in wanted else None
        self.steps: StepIndex | None = StepIndex(self.imports) if "steps" in wanted else None
        self.optimizers: OptimizerTracker | None = OptimizerTracker(self.imports) if "optimizers" in wanted else None
        self.values: Values | None = Values(self.names) if self.names is not None and "values" in wanted else None
        self.losses: LossIndex | None = (
            LossIndex(self.imports, self.names) if self.names is not None and "losses" in wanted else None
        )
        self.gradients: GradientFacts | None = (
            GradientFacts(self.losses) if self.losses is not None and "gradients" in wanted else None
        )
        self.tensors: TensorFacts | None = (
            TensorFacts(self.losses) if self.losses is not None and "tensors" in wanted else None
        )

    def visitors(self) -> list[cst.BatchableCSTVisitor]:
        """The parts to run ahead of the checkers, in dependency order."""
        parts: list[cst.BatchableCSTVisitor | None] = [
            self.imports, self.names, self.steps, self.optimizers, self.losses, self.gradients, self.tensors,
        ]
        return [part for part in parts if part is not None]
