"""A file is parsed by CPython once per process: the engine's depth check, the project index's outline and
the syntax check of a file no rule reads share one outcome (stabfix.project.outline)."""

from __future__ import annotations

import ast

import pytest

from stabfix import engine
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.project import outline

TEXT = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


@pytest.fixture
def parses(monkeypatch):
    """The texts `ast.parse` is called with, from now on (a fresh memory of outcomes)."""
    monkeypatch.setattr(outline, "_PARSED", type(outline._PARSED)())
    monkeypatch.setattr(outline, "_TREES", outline._KeptTrees(outline._TREES.most, outline._TREES.most_chars))
    seen: list[str] = []
    original = ast.parse

    def counted(source, *args, **kwargs):
        seen.append(source)
        return original(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted)
    return seen


def test_an_outlined_file_is_not_parsed_again_by_the_depth_check(parses):
    found = outline.outline_of(TEXT)
    assert found is not None and found.bound("Net")[0].bases == ("torch.nn.Module",)
    assert engine._too_deep_for_python(TEXT) is False
    assert parses == [TEXT]


def test_a_checked_file_is_outlined_without_a_second_parse(parses):
    engine.analyse_text(TEXT, "net.py", list(checker_classes().values()), load_catalog(examples=False))
    assert outline.outline_of(TEXT).bound("Net")[0].kind == "class"
    assert [text for text in parses if text == TEXT] == [TEXT]


def test_a_changed_text_is_parsed_anew(parses):
    outline.outline_of(TEXT)
    changed = TEXT.replace("Net", "Other")
    assert outline.outline_of(changed).bound("Other")
    assert parses == [TEXT, changed]


def test_a_recursion_is_asked_again_and_a_syntax_error_still_reported(parses):
    deep = "x = " + "-" * 5000 + "1\n"
    assert engine._too_deep_for_python(deep) and engine._too_deep_for_python(deep)
    assert parses.count(deep) == 2  # the limit depends on the stack depth of the asker
    broken = "def f(:\n    pass\n"
    assert outline.outline_of(broken) is None
    with pytest.raises(engine.AnalysisError, match=r"^syntax error at line 1, column 7: "):
        engine.check_syntax(broken, "broken.py")


def test_the_memory_is_bounded(parses, monkeypatch):
    monkeypatch.setattr(outline, "_PARSED_KEPT", 2)
    texts = [f"x{index} = 1\n" for index in range(3)]
    for text in texts:
        outline.outline_of(text)
    outline.outline_of(texts[0])  # forgotten: the oldest of three, two kept
    outline.outline_of(texts[2])  # remembered
    assert parses == [*texts, texts[0]]


def test_a_file_outlined_first_gives_its_tree_to_its_own_turn_without_a_second_parse(parses):
    outline.outline_of(TEXT)  # another file's imports, or its own text gate, asked first
    tree = outline.cpython_tree(TEXT)
    assert parses == [TEXT]
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(TEXT), include_attributes=True)


def test_a_kept_tree_is_handed_out_once(parses):
    outline.outline_of(TEXT)
    first, second = outline.cpython_tree(TEXT), outline.cpython_tree(TEXT)
    assert first is not second  # the asker owns its tree: a second asker gets a fresh parse
    assert ast.dump(first) == ast.dump(second)
    assert parses == [TEXT, TEXT]


def test_the_kept_trees_are_bounded_by_number_and_by_the_length_of_their_texts(parses, monkeypatch):
    monkeypatch.setattr(outline, "_TREES", outline._KeptTrees(2, 30))
    texts = [f"x{index} = 1\n" for index in range(3)]  # 7 characters each
    for text in texts:
        outline.outline_of(text)
    assert len(outline._TREES) == 2 and outline._TREES.chars == 14
    long_text = "y = " + "1 + " * 10 + "1\n"  # 47 characters: longer than every tree kept together
    outline.outline_of(long_text)
    assert len(outline._TREES) == 2  # never kept
    fits = "z = 1234567890123456789\n"  # 24 characters: with any other tree, over 30
    outline.outline_of(fits)
    assert len(outline._TREES) == 1 and outline._TREES.chars == len(fits) == 24
    for text in [*texts, long_text]:
        outline.cpython_tree(text)
    outline.cpython_tree(fits)
    assert parses == [*texts, long_text, fits, *texts, long_text]  # only the last one kept was taken
