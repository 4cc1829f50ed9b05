"""Pre-filter groups derived from what a rule reports: a rule that only reports calls of some qualified
names (`names.qualify`, built from identifiers the file spells) may require one part of each name."""

from __future__ import annotations

from stabfix.checkers import checker_classes
from stabfix.checkers.sf403_checkpoint_stateful_function import CHECKPOINTS


def _covers(group: tuple[str, ...], qualified: str) -> bool:
    return any(token in qualified.split(".") for token in group)


def test_sf403_group_names_a_part_of_every_checkpoint_function():
    group = checker_classes()["SF403"].also_needs[-1]
    assert all(_covers(group, name) for name in CHECKPOINTS)
