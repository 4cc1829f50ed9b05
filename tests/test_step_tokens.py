"""The pre-filter group of rules that only report on a training step (`step_recognition.STEP_TOKENS`): every
spelling the step index recognises contains one of its tokens, and the rules that use it still see
every file with a step."""

from __future__ import annotations

import libcst as cst

from stabfix.checkers import checker_classes
from stabfix.model import FileModel
from stabfix.model.source import vocabulary as words
from stabfix.model.source.traversal import walk
from stabfix.model.training.step_recognition import STEP_TOKENS


def _has_token(text: str) -> bool:
    return any(token in text for token in STEP_TOKENS)


def test_every_step_name_and_hook_contains_a_token():
    for name in words.STEP_FUNCTION_NAMES | words.PER_BATCH_HOOKS | {"compute_loss", "optimizer_step", "backward"}:
        assert _has_token(name), name


def test_step_rules_name_the_group():
    classes = checker_classes()
    for code in ("SF201", "SF202", "SF204", "SF301"):
        assert STEP_TOKENS in classes[code].also_needs, code


STEPS = [
    "for x in loader:\n    loss = f(x)\n    loss.backward()\n",
    "for x in loader:\n    opt.step()\n",
    "class M(LightningModule):\n    def training_step(self, batch, i):\n        return self.loss(batch)\n",
    "class T(Trainer):\n    def compute_loss(self, model, inputs):\n        return model(**inputs).loss\n",
    "@trainer.on(Events.ITERATION_COMPLETED)\ndef log(engine):\n    print(engine.state.output)\n",
    "class C(Callback):\n    def on_batch_end(self, trainer):\n        torch.cuda.empty_cache()\n",
    "def fit_batch(self, batch):\n    return self.compute(batch)\nfor b in data:\n    fit_batch(b)\n",
    "for x in loader:\n    model.train()\n    update(model(x), optimizer)\n",
]


def test_files_with_a_step_contain_a_token():
    for text in STEPS:
        model = FileModel(["steps"])
        walk(cst.parse_module(text), model.visitors())
        steps = model.steps
        assert steps._loops or steps._functions
        found = any(steps.is_training_loop(loop) for loop in steps._loops) or any(
            steps.is_step_function(function) for function in steps._functions
        )
        assert found, text
        assert _has_token(text), text


def test_a_file_without_a_step_is_not_parsed_for_step_rules():
    def checkers_for_text(text, classes):  # the text gates (structural ones: tests/test_shape_gates.py)
        return [cls for cls in classes if cls.may_fire(text)]

    classes = [checker_classes()[code] for code in ("SF201", "SF202", "SF204", "SF301")]
    library = "def upsample(x):\n    return x.argmax(-1).cpu().tolist(), torch.cuda.empty_cache(), autocast()\n"
    assert checkers_for_text(library, classes) == []
    assert len(checkers_for_text(library + "loss.backward()\n", classes)) == 4
