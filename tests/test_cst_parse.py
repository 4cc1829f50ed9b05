"""Parsing without libcst's per-node validation (stabfix.cst_parse): the same trees, and validation still
guards every node built by hand (a codemod, another thread, any code after a scan)."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from stabfix import engine
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.cst_parse import parse_source, parsing_unvalidated
from stabfix.findings import Fix
from stabfix.fixer import fixed_by

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "tests" / "redteam").rglob("*.py")])


def _invalid_nodes_raise() -> None:
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1 2")
    with pytest.raises(cst.CSTValidationError):
        cst.SimpleWhitespace("x")


def test_the_trees_equal_the_validated_parse_on_the_fixtures_and_red_team_files():
    assert len(SOURCES) > 500
    compared = 0
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        try:
            validated = cst.parse_module(text)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parse_source(text)
            continue
        unvalidated = parse_source(text)
        assert unvalidated.deep_equals(validated), path
        assert unvalidated.code == text, path
        compared += 1
    assert compared > 500


def test_nodes_built_after_a_scan_are_validated():
    text = sorted((ROOT / "fixtures").glob("*/train.py"))[0].read_text(encoding="utf-8")
    classes = list(checker_classes().values())
    analysis = engine.analyse_text(text, "train.py", classes, load_catalog(examples=False))
    assert analysis.module is not None
    _invalid_nodes_raise()


def test_a_codemod_rebuilding_a_parsed_tree_is_validated():
    # `x and(y)` needs its parentheses: replacing `(y)` by a bare `y` would print `x andy`, and libcst's
    # validation of the rebuilt `and` refuses it. The tree comes from the unvalidated parse.
    module = engine.parse("z = x and(y)\n")
    operand = module.body[0].body[0].value.right
    fix = Fix(safety="safe", description="", changes={operand: cst.Name("y")})
    with pytest.raises(cst.CSTValidationError):
        fixed_by(module, [fix], "f.py")


def test_a_syntax_error_is_reported_as_before_and_validation_comes_back():
    text = "def f(:\n    pass\n"
    with pytest.raises(cst.ParserSyntaxError) as validated:
        cst.parse_module(text)
    with pytest.raises(engine.AnalysisError) as error:
        engine.parse(text)
    expected = validated.value
    assert str(error.value) == (
        f"syntax error at line {expected.raw_line}, column {expected.raw_column + 1}: "
        f"{str(expected.message).splitlines()[0]}"
    )
    _invalid_nodes_raise()


def test_validation_is_off_only_inside_the_block_and_the_block_is_reentrant():
    with parsing_unvalidated():
        cst.Name("1 2")
        with parsing_unvalidated():
            cst.Name("1 2")
        cst.Name("1 2")  # the inner block's end leaves the outer one unvalidated
    _invalid_nodes_raise()
    with pytest.raises(RuntimeError):
        with parsing_unvalidated():
            raise RuntimeError
    _invalid_nodes_raise()


def test_another_thread_validates_while_one_parses():
    # the language server parses on a worker thread while its main thread may build nodes
    inside, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def parse_and_hold() -> None:
        try:
            with parsing_unvalidated():
                inside.set()
                release.wait(10)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    worker = threading.Thread(target=parse_and_hold)
    worker.start()
    try:
        assert inside.wait(10)
        _invalid_nodes_raise()
    finally:
        release.set()
        worker.join(10)
    assert not errors
    _invalid_nodes_raise()
