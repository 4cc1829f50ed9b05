"""SF103's fix (`.detach()` of the stored value) is labelled safe only where every later read of the holder
is seen in the file and none shows or differentiates the graph; `stabfix apply` without `--unsafe-fixes`
relies on that label."""

from __future__ import annotations

import pytest

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text

CATALOG = load_catalog()
BAD = {example.name: example for example in CATALOG["SF103"].bad}


def _safety(name: str) -> list[str]:
    analysis = analyse_text(BAD[name].code, "example.py", [checker_classes()["SF103"]], CATALOG)
    return [finding.fix.safety for finding in analysis.findings if finding.fix is not None]


@pytest.mark.parametrize("name", [
    "the running loss read back with `.item()` later (no reset), so the fix keeps a tensor",
    "an epoch loss all-reduced across ranks (`dist.all_reduce` needs a tensor)",
    "a logging interval (reset every 2000 batches) around a step every batch is no accumulation window",
    "a scaled loss summed into a tensor total; the message parenthesises what it stores",
])
def test_every_later_read_seen_and_graph_free_is_safe(name):
    assert _safety(name) == ["safe"]


@pytest.mark.parametrize("name", [
    "plain loop, running loss summed into a float",  # returned to a caller the file does not show
    "trainer class, a history list on self appended every step",  # state on self
    "a per-element loss (`reduction=\"none\"`) summed position by position; `.item()` would raise",  # printed whole
])
def test_unseen_readers_or_a_printed_graph_make_it_unsafe(name):
    assert _safety(name) == ["unsafe"]


def test_no_fix_turns_a_tensor_into_a_python_number():
    for example in CATALOG["SF103"].bad:
        if example.fixed:
            added = set(example.fixed.splitlines()) - set(example.code.splitlines())
            assert added and not any(".item()" in line for line in added), example.name
