"""Generated suppression comments (seeded, so a failure reproduces): free text, trailing commas, no
space, unknown codes and several directives in one comment never crash a scan; SF001's fix and
`scan --add-noqa` keep every piece of free text, and what they write compiles."""

from __future__ import annotations

import random

import pytest

from stabfix import scan_runner
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.fixer import fix_text
from stabfix.scan_runner import Task, run_tasks

CODES = ("SF001", "SF101", "SF107", "SF302")
# SF107 fires on the load line; the others name rules that ran and found nothing; the rest are unknown
ENTRIES = ("SF107", "SF101", "SF302", "torch-load-without-map-location", "loss-target-requires-grad", "SF999", "E501", "W0612")
SEPARATORS = (",", ", ", " ", " , ", ",  ", "  ")
TRAILING = ("", "", ",", ", ", ",,")
NOQA_HEADS = ("# noqa: ", "#noqa:", "# NOQA:", "# noqa :", "# noqa:  ")
FREE_TEXT = (
    "old reason",
    "because the target never needs grad",
    "TODO(ann) revisit after the refactor",
    "see issue 12",
    "-- kept on purpose",
    "why? ünïcode too",
    "(x, y) [not codes]",
    "checked by hand 2024",
)
TEXT_JOINS = (" ", "  ", ": ", " -- ", "; ")


def _directive(rng: random.Random) -> str:
    kind = rng.choice(("noqa", "noqa", "ignore", "bare"))
    if kind == "bare":
        return rng.choice(("# noqa", "#noqa", "# stabfix: ignore"))
    codes = rng.sample(ENTRIES, rng.randint(1, 3))
    listed = codes[0] + "".join(rng.choice(SEPARATORS) + code for code in codes[1:])
    if kind == "ignore":
        return f"# stabfix: ignore[{listed}{rng.choice(TRAILING)}]"
    return rng.choice(NOQA_HEADS) + listed + rng.choice(TRAILING)


def _comment(rng: random.Random) -> tuple[str, list[str]]:
    """A comment of one to three directives, some followed by free text; with the free text pieces."""
    segments, texts = [], []
    if rng.random() < 0.2:
        texts.append(rng.choice(FREE_TEXT))
        segments.append("# " + texts[-1])
    for _ in range(rng.randint(1, 3)):
        directive = _directive(rng)
        if rng.random() < 0.5 and not directive.endswith(("noqa", "ignore")):
            texts.append(rng.choice(FREE_TEXT))
            directive += rng.choice(TEXT_JOINS) + texts[-1]
        segments.append(directive)
    return rng.choice(("  ", " ", "  ")).join(segments), texts


def _source(rng: random.Random) -> tuple[str, list[str]]:
    first, first_texts = _comment(rng)
    second, second_texts = _comment(rng)
    own_line, own_texts = _comment(rng)
    text = (
        "import torch\n"
        "\n"
        f"x = 1  {first}\n"
        f"state = torch.load(path)  {second}\n"
        'state.to("cuda")\n'
        f"{own_line}\n"
        "y = 2\n"
    )
    return text, first_texts + second_texts + own_texts


CASES = [_source(random.Random(seed)) for seed in range(150)]


def _kept(texts: list[str], before: str, after: str) -> None:
    for piece in texts:
        assert after.count(piece) >= before.count(piece), (piece, before, after)


@pytest.mark.parametrize("text, texts", CASES, ids=[f"seed{seed}" for seed in range(len(CASES))])
def test_generated_suppression_comments(text, texts, tmp_path, monkeypatch):
    specs = load_catalog()
    classes = [checker_classes()[code] for code in CODES]

    analysis = analyse_text(text, "t.py", classes, specs)
    assert analysis.failures == [], (text, analysis.error)

    fixed = fix_text(text, "t.py", classes, specs, unsafe=False, analysis=analysis)
    compile(fixed.text, "t.py", "exec")
    _kept(texts, text, fixed.text)
    again = fix_text(fixed.text, "t.py", classes, specs, unsafe=False)
    assert again.text == fixed.text
    assert not any(item.finding.code == "SF001" for item in again.remaining.findings)

    # `scan --add-noqa`, through the runner that writes the file
    monkeypatch.setattr(scan_runner, "_classes_for", lambda codes: classes)
    path = tmp_path / "t.py"
    path.write_text(text, encoding="utf-8")
    (outcome,) = run_tasks([Task(str(path), "t.py", CODES, "noqa", False)], 1, None).results
    assert outcome.error is None, outcome.error
    noqa_text = path.read_text(encoding="utf-8")
    compile(noqa_text, "t.py", "exec")
    _kept(texts, text, noqa_text)
    before = {(item.finding.line, item.finding.code) for item in analysis.findings}
    after = {(item.finding.line, item.finding.code) for item in analyse_text(noqa_text, "t.py", classes, specs).findings}
    assert not before & after, (text, noqa_text)


def test_a_file_without_a_directive_is_not_tokenized_to_match_findings(monkeypatch):
    import stabfix.suppression as suppression

    plain = "x = 1  # a comment\ny = (1,\n     2)\n"
    monkeypatch.setattr(suppression.tokenize, "generate_tokens", lambda readline: (_ for _ in ()).throw(AssertionError))
    found = suppression.Suppressions.directives_of(plain)
    assert found.by_line == {} and found.line_count == 4
    monkeypatch.undo()
    for spelled in ("# NOQA", "# noqa: SF101", "# Stabfix: ignore[SF101]"):
        text = f"x = 1  {spelled}\n"
        assert suppression.Suppressions.directives_of(text).by_line == suppression.Suppressions.of(text).by_line != {}
