"""Adopting stabfix on an existing codebase: `--add-noqa`, unused suppressions (SF001), `--statistics`,
`--exit-zero`, `--quiet`, and summaries that never claim success when a path could not be analysed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import SF101_SOURCE, json_report, write
from stabfix.suppression import Suppressions, add_noqa, remove_entries

REPO = Path(__file__).resolve().parent.parent
NAMES = {"SF101": "loss-target-requires-grad", "SF201": "cuda-cleanup-in-step"}


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(root.rglob("*.py"))}


def test_add_noqa_round_trip_on_the_fixtures(tmp_path, run_cli):
    copy = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", copy, ignore=shutil.ignore_patterns("__pycache__", ".stabfix_cache"))
    before = json_report(run_cli("scan", ".", "--output-format", "json", "--no-cache", cwd=copy))
    assert before["findings"], "the fixtures have planted findings"
    first = run_cli("scan", ".", "--add-noqa", cwd=copy)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"Added {len(before['findings'])} noqa entries" in first.stdout
    after = run_cli("scan", ".", "--no-cache", cwd=copy)
    assert after.returncode == 0, after.stdout
    assert "All checks passed" in after.stdout
    snapshot = _snapshot(copy)
    second = run_cli("scan", ".", "--add-noqa", cwd=copy)
    assert second.returncode == 0 and "Added 0 noqa entries" in second.stdout
    assert _snapshot(copy) == snapshot, "a second --add-noqa changed files"
    for path, data in snapshot.items():
        compile(data, str(path), "exec")
        original = (REPO / "fixtures" / path.relative_to(copy)).read_bytes()
        # only comments were added: every original line is still there, in order, as a prefix
        for old, new in zip(original.splitlines(), data.splitlines(), strict=True):
            assert new.startswith(old.rstrip()), (path, old, new)


def test_add_noqa_merges_into_an_existing_directive_and_keeps_other_comments():
    text = "a = 1  # noqa: E501\nb = 2  # keep me\nc = 3\r\nd = 4  # stabfix: ignore[SF201]\ne = 5  # noqa\n"
    new, added = add_noqa(text, {1: {"SF101"}, 2: {"SF101"}, 3: {"SF201", "SF101"}, 4: {"SF101"}, 5: {"SF101"}}, NAMES)
    assert new == (
        "a = 1  # noqa: E501, SF101\nb = 2  # keep me  # noqa: SF101\nc = 3  # noqa: SF101, SF201\r\n"
        "d = 4  # stabfix: ignore[SF201, SF101]\ne = 5  # noqa\n"
    )
    assert added == 5
    assert add_noqa(new, {1: {"SF101"}, 3: {"SF201"}}, NAMES) == (new, 0)


def test_add_noqa_skips_lines_that_cannot_carry_a_comment():
    text = 'x = f("""\nline\n""") + \\\n    y\nz = 1\n'
    new, _ = add_noqa(text, {1: {"SF101"}, 2: {"SF101"}}, NAMES)
    assert new == 'x = f("""\nline\n""") + \\\n    y  # noqa: SF101\nz = 1\n'
    compile(new, "x.py", "exec")
    suppressions = Suppressions.of(new)
    assert suppressions.matching(1, "SF101", NAMES["SF101"]) == {(4, "SF101")}
    assert suppressions.matching(5, "SF101", NAMES["SF101"]) == set()


def test_remove_entries_keeps_everything_else():
    assert remove_entries("# noqa: SF101", {"SF101"}) == ""
    assert remove_entries("# noqa: E501, SF101", {"SF101"}) == "# noqa: E501"
    assert remove_entries("# type: ignore  # noqa: SF101", {"SF101"}) == "# type: ignore"
    assert remove_entries("# noqa: SF101  # why", {"SF101"}) == "# why"
    assert remove_entries("# stabfix: ignore[SF101, SF201]", {"SF201"}) == "# stabfix: ignore[SF101]"
    assert remove_entries("# noqa: SF101 the target needs grad", {"SF101"}) == "# the target needs grad"
    assert remove_entries("# noqa: E501 SF101 long line", {"SF101"}) == "# noqa: E501 long line"


def test_unused_suppression_is_reported_and_removed_by_apply(tmp_path, run_cli):
    source = SF101_SOURCE.replace(
        "    return F.mse_loss(model(x), target)\n", "    return F.mse_loss(model(x), target)  # noqa: E501, SF201\n"
    ).replace("target.requires_grad_(True)", "target.requires_grad_(True)  # noqa: SF101")
    write(tmp_path, "train.py", source)
    report = json_report(run_cli("scan", str(tmp_path), "--output-format", "json", "--no-cache"))
    assert [(f["code"], f["line"], f["fix_safety"]) for f in report["findings"]] == [("SF001", 7, "safe")]
    assert run_cli("apply", str(tmp_path), "--no-cache").returncode == 0
    assert (tmp_path / "train.py").read_text() == source.replace("  # noqa: E501, SF201", "  # noqa: E501")
    # a rule that was not selected is not judged
    write(tmp_path, "train.py", source)
    assert run_cli("scan", str(tmp_path), "--ignore", "SF201", "--no-cache").returncode == 0


def test_statistics_counts_per_rule(tmp_path, run_cli):
    write(tmp_path, "a.py", SF101_SOURCE)
    write(tmp_path, "b.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--statistics", "--no-cache")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["2", "SF101", "[*]", "loss-target-requires-grad"]
    assert "train.py:6" not in result.stdout and "Found 2 findings" in lines[-1]


def test_exit_zero_and_quiet(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--exit-zero", "--quiet", "--no-cache")
    assert result.returncode == 0
    assert "SF101" in result.stdout and "Found" not in result.stdout
    assert run_cli("scan", str(tmp_path / "missing"), "--exit-zero").returncode == 2, "exit-zero keeps usage errors"
    assert run_cli("scan", str(tmp_path), "--quiet", "--no-cache").returncode == 1


def test_a_run_with_errors_never_says_all_checks_passed(tmp_path, run_cli):
    missing = run_cli("scan", str(tmp_path / "missing"))
    assert missing.returncode == 2
    assert "All checks passed" not in missing.stdout + missing.stderr
    assert "could not be analysed" in missing.stdout
    write(tmp_path, "broken.py", "def f(:\n")
    broken = run_cli("scan", str(tmp_path), "--no-cache")
    assert broken.returncode == 1 and "All checks passed" not in broken.stdout
    applied = run_cli("apply", str(tmp_path), "--no-cache")
    assert applied.returncode == 1 and "Nothing left to fix." not in applied.stdout


def test_apply_accepts_no_cache(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("apply", str(tmp_path), "--no-cache")
    assert result.returncode == 0, result.stderr
    assert "requires_grad_(True)" not in (tmp_path / "train.py").read_text()


def test_findings_link_to_their_rule_page(tmp_path, run_cli):
    from stabfix.docs import rule_url

    write(tmp_path, "train.py", SF101_SOURCE)
    url = rule_url("SF101", "loss-target-requires-grad")
    assert url.endswith("/docs/rules/SF101-loss-target-requires-grad.md")
    assert f"help: {url}" in run_cli("scan", str(tmp_path), "--no-cache").stdout
    out = tmp_path / "report.sarif"
    run_cli("scan", str(tmp_path), "--output-format", "sarif", "-o", str(out), "--no-cache")
    rules = json.loads(out.read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"]: rule["helpUri"] for rule in rules}["SF101"] == url
