"""SF203 anomaly-detection-left-on: autograd anomaly mode switched on unconditionally in training.

A finding is an anomaly-mode switch (`model.amp.anomaly`) that a literal turns on
(`torch.autograd.set_detect_anomaly(True)`, `with torch.autograd.detect_anomaly():`, Lightning's
`Trainer(detect_anomaly=True)`), behind no gate (`if args.debug:`, an `except` handler; device checks
and `if __name__ == "__main__":` are not gates), in training code:
- at module level (it is on for every program that runs or imports the file);
- in a function on a training step's path or called from a training loop (`model.steps.in_training`),
  one that runs a backward or an optimizer step itself, one that calls such a function of the file,
  or the `__init__` of a class whose methods train or compute a loss (the mode is process-wide: a
  model built with it trains with it, whichever file runs the backward);
- a Lightning `Trainer(...)`, wherever it is built.
Silent in test files and harnesses (`test_*`, `check_*`, `debug_*`), and in a helper that every call
site of the file reaches only behind a gate (`if not torch.isfinite(loss): debug_nan(...)`).

Fix (unsafe): the switch is turned on only when `DETECT_ANOMALY=1` is set in the environment.
"""

from __future__ import annotations


import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.amp import anomaly_gate_fix
from stabfix.model.domain.amp import AnomalySwitch
from stabfix.model.source import vocabulary as words
from stabfix.model.source.syntax import node_code
from stabfix.model.source.vocabulary import is_test_path
from stabfix.model.training.step_frames import BranchFrame, ClassFrame, Frame, FunctionFrame

_TRAINING_EVENTS = ("backward", "step")


class AnomalyDetectionLeftOn(Checker):
    code = "SF203"
    tokens = ("detect_anomaly",)
    needs = ("amp", "steps", "events", "losses")

    def leave_Module(self, original_node: cst.Module) -> None:
        if is_test_path(self.context.path):
            return
        amp = self.model.amp
        amp.scaling()  # resolves the traversal's records
        for switch in amp.anomaly:
            if switch.mode != "on" or _gated(switch.frames):
                continue
            where = self._training_place(switch)
            if where is None:
                continue
            fix = anomaly_gate_fix(switch.node, switch.argument, self.model.imports) if switch.how != "decorator" else None
            self.report(switch.node, self._message(switch, where), fix)

    def _training_place(self, switch: AnomalySwitch) -> str | None:
        """How the switch is part of training (worded for the message), or None when it is not."""
        functions = [frame for frame in switch.frames if isinstance(frame, FunctionFrame)]
        if any(words.HARNESS_FUNCTION.match(frame.name) for frame in functions):
            return None
        events = self.model.events
        if not functions:  # module level: on for every program that runs or imports this file
            return "for the whole run (module level)" if events.of_kind(*_TRAINING_EVENTS) else "for every program importing this module"
        function = functions[-1]
        callers = self.model.amp.local_calls(function.name)
        if callers and all(_gated(frames) for frames in callers):
            return None  # a debugging helper, reached only when something went wrong
        if switch.api.endswith("Trainer"):
            return f"for every run `{function.name}()` starts"
        if self.model.steps.in_training(switch.frames) or events.in_function(function.node, *_TRAINING_EVENTS):
            return f"on every step of `{function.name}()`"
        if function.name == "__init__" and function.owner is not None and self._class_trains(function.owner):
            return f"for every `{function.owner.node.name.value}` built"
        if function.name == "__init__" and function.owner is not None and self.model.losses.computed_in_class(function.owner.node):
            # the mode is process-wide: on for every program that builds the model, trainers in other files included
            return f"for every program that builds a `{function.owner.node.name.value}` (its methods compute a loss)"
        for call in events.in_function(function.node, "call"):
            definition = self.model.names.definition_of(call.node)
            if definition is not None and events.in_function(definition, *_TRAINING_EVENTS):
                return f"for the training `{function.name}()` runs"
        return None

    def _class_trains(self, owner: ClassFrame) -> bool:
        return any(event.site.cls is owner.node for event in self.model.events.of_kind(*_TRAINING_EVENTS))

    def _message(self, switch: AnomalySwitch, where: str) -> str:
        spelled = " ".join(node_code(switch.node).split())
        if len(spelled) > 50:
            spelled = spelled[:47] + "..."
        return (
            f"`{spelled}` turns on anomaly detection {where}: a traceback per op and a NaN check per backward "
            "make steps several times slower; enable it only to debug (e.g. when `DETECT_ANOMALY=1`)"
        )


def _gated(frames: tuple[Frame, ...]) -> bool:
    return any(isinstance(frame, BranchFrame) and frame.gate and not _is_main_guard(frame) for frame in frames)


def _is_main_guard(frame: BranchFrame) -> bool:
    test = frame.node.test if type(frame.node) is cst.If and frame.kind == "if" else None
    return (
        type(test) is cst.Comparison
        and type(test.left) is cst.Name
        and test.left.value == "__name__"
    )

