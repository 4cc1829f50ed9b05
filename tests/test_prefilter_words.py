"""Pre-filter words: a rule that reports only what the file's own code names (a call resolved through the
file's imports) may require whole words of the file, not substrings (`load` is not in `load_state_dict`)."""

from __future__ import annotations

import pytest

from stabfix.checkers import checker_classes
from stabfix.checkers.sf107_torch_load_without_map_location import LOADS
from stabfix.checkers.sf414_functional_dropout_always_on import FUNCTIONAL
from stabfix.checkers.sf415_checkpoint_drops_gradients import _ALWAYS_REENTRANT, _CHECKPOINT, _SEQUENTIAL

CLASSES = checker_classes()
REPORTED = {
    "SF107": set(LOADS),
    "SF414": set(FUNCTIONAL),
    "SF415": {_CHECKPOINT, _SEQUENTIAL, *_ALWAYS_REENTRANT},
}


@pytest.mark.parametrize("code", sorted(REPORTED))
def test_every_group_names_a_part_of_every_reported_call(code):
    # a call resolves to `a.b.c` only through an import or attribute spelling some of its parts
    for qualified in REPORTED[code]:
        parts = set(qualified.split("."))
        for group in CLASSES[code].words:
            assert parts & set(group), (code, qualified, group)


def selected(text: str) -> set[str]:
    return {cls.code for cls in CLASSES.values() if cls.may_fire(text)}  # the text gates


def test_a_word_inside_a_longer_identifier_does_not_count():
    assert "SF107" not in selected("import torch\nmodel.load_state_dict(torch.zeros(1))\nDataLoader(ds)\n")
    assert "SF107" in selected("from torch import load as restore\nmodel.load_state_dict(restore(p))\n")
    assert "SF415" not in selected("import torch\ntrainer.save_checkpoint(path)\n")
    assert "SF415" in selected("from torch.utils.checkpoint import checkpoint as ckpt\n")
    assert "SF413" not in selected("import torch.nn as nn\n\n@classmethod\ndef subclass_of(x): pass\n")
    assert "SF413" in selected("import torch.nn as nn\n\nclass Net(nn.Module):\n    pass\n")


def test_the_words_of_one_text_do_not_answer_for_another():
    first = "import torch\ntorch.load(p)\n"
    second = "import torch\ntorch.save(p)\n"
    assert "SF107" in selected(first)
    assert "SF107" not in selected(second)
    assert "SF107" in selected(first)


def test_token_answers_are_those_of_a_substring_search():
    from stabfix.text_gates import tokens_in

    text = "opt.zero_grad()\nloss = crit(out, y)  # é_norm\nx = 1e-8\ndef f(a,b): return a\n"
    tokens = ["grad", "zero_grad", "ero_gr", "zero_grad(", "e-8", "1e", "crit(out", "crit", "é_n",
              "loss =", "a,b", "b)", "a\nx", "missing", "grad_norm", "f", "opt.zero"]
    answers = tokens_in(text)
    assert [token in answers for token in tokens] == [token in text for token in tokens]
    other = "import torch\n"
    assert "grad" not in tokens_in(other) and "torch" in tokens_in(other)
    assert "grad" in tokens_in(text)  # back to the first text: answered anew, not from the other's
