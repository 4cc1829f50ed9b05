"""verify reads running functions' locals (to name holders and models) without keeping any value alive:
what it read would otherwise be counted as the user's live memory for the rest of the run."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

pytest.importorskip("torch")

from stabfix.verify import holders  # noqa: E402
from stabfix.verify.frame_locals import frame_locals  # noqa: E402


class Batch:
    """A stand-in for a training batch: weak-referenceable."""


def _read_caller_locals() -> list[str]:
    return [name for name, _ in frame_locals(sys._getframe(1))]


def test_reading_a_running_function_locals_keeps_no_value_alive():
    def loop() -> tuple[list[str], bool]:
        batch = Batch()
        first = weakref.ref(batch)
        names = _read_caller_locals()
        batch = Batch()  # the next batch: the first one has no owner left
        return names, first() is None

    names, released = loop()
    assert "batch" in names and "first" in names
    assert released


def test_a_kept_locals_dict_and_a_module_namespace_are_left_as_they_are():
    def keeps_locals() -> dict:
        value = Batch()
        mine = locals()
        _read_caller_locals()
        return mine

    assert "value" in keeps_locals()
    namespace: dict = {"frame_locals": frame_locals, "sys": sys}
    exec("x = 1\nnames = [n for n, _ in frame_locals(sys._getframe(0))]", namespace)
    assert namespace["x"] == 1 and "x" in namespace["names"]


def test_the_holder_search_leaves_no_cycle_holding_its_callers_tensors():
    import torch

    def step() -> weakref.ref:
        batch = torch.ones(8)
        found = holders._running_locals()
        assert found[id(batch)][1] == "batch"
        return weakref.ref(batch)

    was_enabled = gc.isenabled()
    gc.disable()  # as in verify's sampled steps: only reference counting frees anything
    try:
        ref = step()
        assert ref() is None
    finally:
        if was_enabled:
            gc.enable()
