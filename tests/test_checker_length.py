"""Each rule is one short checker over the shared model (issues 21/22: at most 200 lines): a checker that grows past
it asks for a fact that belongs in `stabfix/model/`, where every rule can use it."""

from pathlib import Path

import pytest

CHECKERS = sorted((Path(__file__).resolve().parent.parent / "stabfix" / "checkers").glob("sf*.py"))


@pytest.mark.parametrize("path", CHECKERS, ids=[path.stem for path in CHECKERS])
def test_a_checker_stays_within_200_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 200
