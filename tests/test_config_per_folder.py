"""Per-folder configuration, as ruff resolves it: each file runs under the nearest config above it,
`extend` inherits, two config files in one folder are a warning, and nothing depends on argument order,
job count or the cache."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from helpers import SF101_SOURCE, json_report, write

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def _scan(run_cli, *args, cache=False):
    result = run_cli("scan", *map(str, args), "--output-format", "json", *(() if cache else ("--no-cache",)))
    assert result.returncode in (0, 1), result.stderr
    return json_report(result)


def _flagged(report, root: Path) -> list[str]:
    return sorted({Path(f["path"]).resolve().relative_to(root.resolve()).as_posix() for f in report["findings"]})


def _two_projects(tmp_path: Path) -> None:
    """`quiet/` ignores SF101 in its stabfix.yaml, `strict/` selects only SF101 in its pyproject.toml;
    each excludes its own `generated/` folder only (the other's stays scanned)."""
    write(tmp_path, "quiet/stabfix.yaml", "ignore: [SF101]\nexclude: [generated/]\n")
    write(tmp_path, "strict/pyproject.toml", '[tool.stabfix]\nselect = ["SF101"]\nexclude = ["build_out/"]\n')
    for project in ("quiet", "strict"):
        for name in ("train.py", "generated/model.py", "build_out/step.py"):
            write(tmp_path, f"{project}/{name}", SF101_SOURCE)


@pytest.mark.parametrize("order", [("quiet", "strict"), ("strict", "quiet")])
def test_each_file_takes_the_nearest_config_whatever_the_argument_order(tmp_path, run_cli, order):
    _two_projects(tmp_path)
    report = _scan(run_cli, *(tmp_path / name for name in order))
    # quiet/: SF101 ignored everywhere; strict/: its build_out/ excluded, quiet's `generated/` means nothing there
    assert _flagged(report, tmp_path) == ["strict/generated/model.py", "strict/train.py"]
    assert report["summary"]["files_scanned"] == 4  # quiet: train.py, build_out/step.py; strict: train.py, generated/


def test_argument_order_and_job_count_change_nothing_in_the_output(tmp_path, run_cli):
    _two_projects(tmp_path)
    outputs = {
        run_cli("scan", *map(str, args), "--output-format", "json", "--no-cache", "--jobs", jobs).stdout
        for args, jobs in (
            ((tmp_path / "quiet", tmp_path / "strict"), "1"),
            ((tmp_path / "strict", tmp_path / "quiet"), "2"),
            ((tmp_path / "strict/train.py", tmp_path / "quiet", tmp_path / "strict"), "2"),
        )
    }
    assert len(outputs) == 1


def test_config_of_a_parent_folder_scan_applies_the_sub_projects_own(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "select: [SF101]\n")
    _two_projects(tmp_path)
    assert _flagged(_scan(run_cli, tmp_path), tmp_path) == ["strict/generated/model.py", "strict/train.py"]


def test_command_line_config_overrides_every_folders_own(tmp_path, run_cli):
    _two_projects(tmp_path)
    override = write(tmp_path, "ci/override.yaml", "select: [SF101]\n")
    report = _scan(run_cli, tmp_path / "quiet", tmp_path / "strict", "--config", override)
    assert len(_flagged(report, tmp_path)) == 6  # no folder's ignore or exclude applies


def test_scanning_fixtures_honours_each_fixtures_own_exclude(tmp_path, run_cli):
    """Six fixtures exclude their `run_smoke.py` driver in their stabfix.yaml: scanning `fixtures/` (under the
    repository, which has no stabfix config) must skip exactly those."""
    excluded = [
        config.parent / "run_smoke.py"
        for config in sorted(FIXTURES.glob("*/stabfix.yaml"))
        if "run_smoke.py" in (yaml.safe_load(config.read_text()).get("exclude") or [])
    ]
    assert len(excluded) >= 6 and all(path.is_file() for path in excluded)
    honoured = _scan(run_cli, FIXTURES)["summary"]["files_scanned"]
    no_excludes = _scan(run_cli, FIXTURES, "--config", write(tmp_path, "empty.yaml", "{}\n"))["summary"]["files_scanned"]
    assert no_excludes - honoured == len(excluded)


def test_extend_inherits_and_the_childs_keys_override(tmp_path, run_cli):
    # the shared base lives in the parent folder; its patterns stay relative to that folder
    write(tmp_path, "stabfix.yaml", "ignore: [SF101]\nper-file-ignores:\n  'inherits/legacy/*.py': [SF101]\n")
    write(tmp_path, "inherits/stabfix.yaml", "extend: ../stabfix.yaml\nselect: [SF101, SF102]\n")
    write(tmp_path, "inherits_more/stabfix.yaml", "extend: '../inherits/stabfix.yaml'\nextend-ignore: [SF101]\n")
    write(tmp_path, "plain/stabfix.yaml", "extend: ../stabfix.yaml\n")
    write(tmp_path, "adds/stabfix.yaml", "extend: ../stabfix.yaml\nextend-select: [SF101]\n")
    for project in ("inherits", "inherits_more", "plain", "adds"):
        write(tmp_path, f"{project}/train.py", SF101_SOURCE)
        write(tmp_path, f"{project}/legacy/old.py", SF101_SOURCE)
    # plain: the base's ignore; inherits: its own `select` brings SF101 back, except where the base's
    # per-file-ignores pattern (relative to the base's folder) matches; inherits_more: a chain, then extend-ignore;
    # adds: extend-select after the base's ignore, and the base's pattern names another folder's legacy/
    assert _flagged(_scan(run_cli, tmp_path), tmp_path) == ["adds/legacy/old.py", "adds/train.py", "inherits/train.py"]


def test_extend_works_from_pyproject_and_to_a_missing_file_is_an_error(tmp_path, run_cli):
    write(tmp_path, "base.yaml", "ignore: [SF101]\n")
    write(tmp_path, "proj/pyproject.toml", '[tool.stabfix]\nextend = "../base.yaml"\n')
    write(tmp_path, "proj/train.py", SF101_SOURCE)
    assert _scan(run_cli, tmp_path / "proj")["findings"] == []
    write(tmp_path, "proj/pyproject.toml", '[tool.stabfix]\nextend = "../nowhere.yaml"\n')
    result = run_cli("scan", str(tmp_path / "proj"), "--no-cache")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "nowhere.yaml" in result.stderr


@pytest.mark.parametrize("second, back_to", [("extend: ../a/stabfix.yaml\n", "a"), ("extend: stabfix.yaml\n", "b")])
def test_an_extend_cycle_is_a_one_line_error(tmp_path, run_cli, second, back_to):
    write(tmp_path, "a/stabfix.yaml", "extend: ../b/stabfix.yaml\n")
    write(tmp_path, "b/stabfix.yaml", second)  # a -> b -> a, or b -> b
    write(tmp_path, "a/train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path / "a"), "--no-cache")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    loop = lines[0].split("'extend' forms a cycle: ", 1)[1].split(" -> ")
    assert [Path(step).resolve().parent.name for step in loop] == ["a", "b", back_to]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_both_kinds_of_config_in_one_folder_warn_and_name_the_winner(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "ignore: [SF101]\n")
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.stabfix]\nselect = ["SF101"]\n')
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 0  # stabfix.yaml, which ignores SF101, wins
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "stabfix.yaml" in warnings[0] and "pyproject.toml" in warnings[0] and "using stabfix.yaml" in warnings[0]
    quiet = run_cli("scan", str(tmp_path), "--no-cache", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_pyproject_that_only_mentions_stabfix_is_no_second_config(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "ignore: [SF101]\n")
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"  # configured in stabfix.yaml, not [tool.stabfix]\n')
    write(tmp_path, "train.py", SF101_SOURCE)
    assert run_cli("scan", str(tmp_path), "--no-cache").stderr == ""


def test_the_cache_serves_each_file_under_its_own_config(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "select: [SF101]\n")  # the scan's root: the cache lives here
    write(tmp_path, "quiet/stabfix.yaml", "ignore: [SF101]\n")
    for project in ("quiet", "loud"):
        write(tmp_path, f"{project}/train.py", SF101_SOURCE)  # the same bytes in both folders
    first = _scan(run_cli, tmp_path, cache=True)
    assert (tmp_path / ".stabfix_cache").is_dir()
    assert _flagged(first, tmp_path) == ["loud/train.py"]
    assert _scan(run_cli, tmp_path, cache=True) == first
    assert _flagged(_scan(run_cli, tmp_path / "quiet", tmp_path / "loud", cache=True), tmp_path) == ["loud/train.py"]
    write(tmp_path, "quiet/stabfix.yaml", "select: [SF101]\n")  # a config edit takes effect at once
    assert _flagged(_scan(run_cli, tmp_path, cache=True), tmp_path) == ["loud/train.py", "quiet/train.py"]


AMP_SOURCE = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"  # its fix needs torch>=2.3


@pytest.mark.parametrize("order", [("old", "new", "inherits"), ("inherits", "new", "old")])
def test_target_torch_is_per_folder_and_named_by_the_file_that_sets_it(tmp_path, run_cli, order):
    write(tmp_path, "old/stabfix.yaml", 'target-torch: "1.13"\n')
    write(tmp_path, "new/stabfix.yaml", 'target-torch: "2.4"\n')
    write(tmp_path, "inherits/stabfix.yaml", "extend: ../old/stabfix.yaml\n")
    for project in order:
        write(tmp_path, f"{project}/train.py", AMP_SOURCE)
    report = _scan(run_cli, *(tmp_path / name for name in order))
    scaler = {Path(item["path"]).parent.name: item for item in report["findings"] if "GradScaler" in item["message"]}
    assert scaler["new"]["fix_safety"] != "none" and "fix_withheld" not in scaler["new"]
    for project in ("old", "inherits"):
        assert scaler[project]["fix_safety"] == "none"
        assert f'`target-torch = "1.13"` in {tmp_path / "old" / "stabfix.yaml"}' in scaler[project]["fix_withheld"]


def test_a_broken_config_met_while_walking_is_a_one_line_error(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    write(tmp_path, "sub/stabfix.yaml", "select: [SF101\n")  # read only when discovery reaches sub/
    write(tmp_path, "sub/step.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / 'sub' / 'stabfix.yaml'}: malformed YAML")
