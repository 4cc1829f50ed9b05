"""The scan cache serves only what the running stabfix would compute: it is keyed on stabfix's own code
and rule files (not its version string), and an entry that is not a list of well-formed findings is
dropped and its file analysed again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import json_report, write
from stabfix.cache import CACHE_DIR_NAME, code_digest

REPO = Path(__file__).resolve().parent.parent

RESUME = '''import torch


def resume(model, optimizer, path):
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1
'''


def _cache_entries(project: Path) -> dict:
    """The cached findings by key, in the file whatever its name and layout."""
    (cache_file,) = [path for path in (project / CACHE_DIR_NAME).glob("*.json")]
    data = json.loads(cache_file.read_text(encoding="utf-8"))
    return data["entries"] if "entries" in data else data


def _rewrite_entries(project: Path, change) -> None:
    (cache_file,) = [path for path in (project / CACHE_DIR_NAME).glob("*.json")]
    data = json.loads(cache_file.read_text(encoding="utf-8"))
    entries = data["entries"] if "entries" in data else data
    for key in entries:
        entries[key] = change(entries[key])
    cache_file.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def stabfix_copy(tmp_path):
    """A copy of stabfix (code and rule YAMLs) that a test may edit, as a user's checkout would be."""
    source = tmp_path / "src"
    shutil.copytree(REPO / "stabfix", source / "stabfix", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", source / "rules")
    return source


def test_editing_a_rule_yaml_or_a_checker_invalidates_the_cache(tmp_path, stabfix_copy, run_cli):
    project = tmp_path / "project"
    write(project, "train.py", RESUME)
    env = {"PYTHONPATH": str(stabfix_copy)}

    def scan() -> dict:
        result = run_cli("scan", ".", "--output-format", "json", "--jobs", "1", cwd=project, env=env)
        assert result.returncode == 1, result.stderr
        (finding,) = json_report(result)["findings"]
        return finding

    assert scan()["severity"] == "warning"
    # with nothing changed, the cached entry is what a rescan reports
    _rewrite_entries(project, lambda findings: [{**item, "message": "served from the cache"} for item in findings])
    assert scan()["message"] == "served from the cache"

    yaml = next((stabfix_copy / "rules").glob("SF107-*.yaml"))
    yaml.write_text(yaml.read_text(encoding="utf-8").replace("severity: warning", "severity: error"), encoding="utf-8")
    rescanned = scan()
    assert rescanned["severity"] == "error" and rescanned["message"] != "served from the cache"

    _rewrite_entries(project, lambda findings: [{**item, "message": "served from the cache"} for item in findings])
    checker = next((stabfix_copy / "stabfix" / "checkers").glob("sf107_*.py"))
    text = checker.read_text(encoding="utf-8")
    assert "pass `map_location=" in text
    checker.write_text(text.replace("pass `map_location=", "please pass `map_location="), encoding="utf-8")
    assert "please pass `map_location=" in scan()["message"]


CORRUPTIONS = {
    "a finding without its line": lambda findings: [{k: v for k, v in item.items() if k != "line"} for item in findings],
    "a line that is a string": lambda findings: [{**item, "line": str(item["line"])} for item in findings],
    "a column of 0": lambda findings: [{**item, "column": 0} for item in findings],
    "an unknown key": lambda findings: [{**item, "confidence": 1} for item in findings],
    "an unknown fix safety": lambda findings: [{**item, "fix_safety": "maybe"} for item in findings],
    "a finding that is no object": lambda findings: [1, *findings],
    "an entry that is no list": lambda findings: {"findings": findings},
    "an entry that is a string": lambda findings: "SF107",
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_entry_is_dropped_and_recomputed(tmp_path, run_cli, corrupt):
    write(tmp_path, "train.py", RESUME)
    clean = run_cli("scan", str(tmp_path), "--output-format", "json", "--jobs", "1")
    _rewrite_entries(tmp_path, corrupt)

    rescanned = run_cli("scan", str(tmp_path), "--output-format", "json", "--jobs", "1")

    assert rescanned.returncode == 1, rescanned.stderr
    assert rescanned.stdout == clean.stdout  # the finding, recomputed; no error
    assert json_report(rescanned)["errors"] == []
    # and the entry was replaced by a good one
    (entry,) = _cache_entries(tmp_path).values()
    where = ("code", "line", "column", "end_line", "end_column", "message", "fix_safety")
    assert [[item[key] for key in where] for item in entry] == [
        [finding[key] for key in where] for finding in json_report(clean)["findings"]
    ]


def test_the_digest_follows_code_and_rules_but_not_bytecode(stabfix_copy):
    package, rules = stabfix_copy / "stabfix", stabfix_copy / "rules"
    before = code_digest(package, rules)
    (package / "model" / "__pycache__").mkdir(exist_ok=True)
    (package / "model" / "__pycache__" / "names.cpython-311.pyc").write_bytes(b"\0")
    assert code_digest(package, rules) == before

    part = next((package / "model").rglob("names.py"))  # a model part, wherever its layer puts it
    part.write_text(part.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after_code = code_digest(package, rules)
    assert after_code != before

    (rules / "SF999-new-rule.yaml").write_text("code: SF999\n", encoding="utf-8")
    assert code_digest(package, rules) != after_code
