"""SF301 fp16-autocast: float16 autocast in training with no loss scaling.

A finding is an autocast region (`model.amp.regions`) that
- computes in float16 (`model.amp.dtype`): `dtype=torch.float16`/`torch.half`, a name or config field
  of the file holding it, or no dtype where the API's default is float16 (the legacy
  `torch.cuda.amp.autocast()`, `torch.autocast("cuda")`, a device the file does not spell);
- is not switched off by a literal (`autocast(enabled=False)` forces float32);
- runs in training: on a training step's path or in a helper a training loop calls
  (`model.steps.in_training`), itself or where a `with ctx:` enters it (`ctx = torch.autocast(...)` built
  once), not under `no_grad`/`inference_mode`;
- in a file that never scales its loss (`model.amp.scaling()` is empty: no `GradScaler`, no scaled
  backward, no wrapper such as accelerate/DeepSpeed/Fabric/Lightning doing the backward for it).

Fix (unsafe): the float16 that decides becomes `torch.bfloat16` (the `dtype=` argument, or the one
assignment it comes from), or `dtype=torch.bfloat16` is added where the default decides.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.amp import bfloat16_fix
from stabfix.model.domain.amp import AutocastRegion
from stabfix.model.source.syntax import node_code
from stabfix.model.training.step_recognition import STEP_TOKENS
from stabfix.shape import Shape

_SHOWN = 50


class Fp16Autocast(Checker):
    code = "SF301"
    tokens = ("autocast",)
    also_needs = (STEP_TOKENS,)  # reported only in training (`steps.in_training`), which needs one of them
    needs = ("amp", "steps")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # an autocast region: torch's `autocast` named (called, or `partial(...)`)
        return "autocast" in shape.words

    def leave_Module(self, original_node: cst.Module) -> None:
        amp, steps = self.model.amp, self.model.steps
        if amp.scaling():
            return
        for region in amp.regions:
            if not amp.enabled(region) or amp.grad_off(region):
                continue
            dtype, source = amp.dtype(region)
            if dtype != "float16":
                continue
            if not any(steps.in_training(frames) for frames in (region.frames, *amp.entered(region))):
                continue
            fix = bfloat16_fix(region.call, source, self.model.imports)
            self.report(region.call, self._message(region, source), fix)

    def _message(self, region: AutocastRegion, source) -> str:
        amp = self.model.amp
        explicit = amp.argument(region, "dtype")
        if explicit is None:
            why = "(float16 is its default dtype)"
        elif source is not None and source is not explicit:
            why = f"(`{_code(explicit)}` is `{_code(source)}`)"
        else:
            why = ""
        return (
            f"`{_code(region.call)}` trains in float16 {why} with no `GradScaler` in this file: gradients "
            "underflow to zero, activations overflow to inf/NaN; use `dtype=torch.bfloat16` or add a `GradScaler`"
        ).replace("  ", " ")


def _code(node: cst.CSTNode) -> str:
    text = " ".join(node_code(node).split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
