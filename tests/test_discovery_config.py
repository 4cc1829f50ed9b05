"""File discovery, configuration and deterministic, cached output."""

from __future__ import annotations

from helpers import SF101_SOURCE, json_report, write


def _paths(report):
    return sorted({f["path"].rsplit("/", 1)[-1] for f in report["findings"]})


def _scan(run_cli, *args, cwd=None, env=None):
    return json_report(run_cli("scan", *map(str, args), "--output-format", "json", "--no-cache", cwd=cwd, env=env))


def test_skips_vcs_venv_cache_and_gitignored_paths(tmp_path, run_cli):
    write(tmp_path, "src/train.py", SF101_SOURCE)
    for skipped in (".git/hooks/x.py", ".venv/lib/x.py", "build/lib/x.py", "__pycache__/x.py", "myenv/lib/x.py", "generated/x.py", "notes/ignored_file.py"):
        write(tmp_path, skipped, SF101_SOURCE)
    write(tmp_path, "myenv/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, ".gitignore", "generated/\n")
    write(tmp_path, "notes/.gitignore", "ignored_*.py\n")
    report = _scan(run_cli, tmp_path)
    assert [f["path"] for f in report["findings"]] == [f"{tmp_path}/src/train.py"]


def test_explicit_file_is_scanned_even_if_ignored_or_excluded(tmp_path, run_cli):
    target = write(tmp_path, "generated/x.py", SF101_SOURCE)
    write(tmp_path, ".gitignore", "generated/\n")
    write(tmp_path, "stabfix.yaml", "exclude: ['generated/']\n")
    assert len(_scan(run_cli, target)["findings"]) == 1


def test_config_exclude_select_ignore_and_per_file_ignores(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.stabfix]\nexclude = ["legacy/"]\nper-file-ignores = {"tests/*.py" = ["SF1"]}\n')
    for name in ("legacy/a.py", "tests/b.py", "src/c.py"):
        write(tmp_path, name, SF101_SOURCE)
    assert _paths(_scan(run_cli, tmp_path)) == ["c.py"]
    write(tmp_path, "pyproject.toml", '[tool.stabfix]\nignore = ["loss-target-requires-grad"]\n')
    assert _scan(run_cli, tmp_path)["findings"] == []


def test_config_is_found_by_walking_up_from_the_scanned_path(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "ignore: [SF101]\n")
    target = write(tmp_path, "deep/er/train.py", SF101_SOURCE)
    assert _scan(run_cli, target.parent)["findings"] == []


def test_pyproject_without_a_stabfix_table_is_not_a_config(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "ignore: [SF101]\n")
    write(tmp_path, "pkg/pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path, "pkg/train.py", SF101_SOURCE)
    assert _scan(run_cli, tmp_path / "pkg")["findings"] == []


def test_output_is_identical_across_jobs_and_hash_seeds(tmp_path, run_cli):
    for index in range(24):
        write(tmp_path, f"pkg{index % 3}/mod_{index:02d}.py", SF101_SOURCE if index % 2 else "import torch\n")
    write(tmp_path, "pkg1/broken.py", "def f(:\n")
    reports = [
        run_cli("scan", str(tmp_path), "--output-format", "json", "--no-cache", "--jobs", jobs, env={"PYTHONHASHSEED": seed}).stdout
        for jobs, seed in (("1", "0"), ("2", "1"), ("2", "12345"))
    ]
    assert reports[0] == reports[1] == reports[2]
    assert len(json_report(type("R", (), {"stdout": reports[0]}))["findings"]) == 12


def test_cache_is_written_reused_and_invalidated_by_content(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    first = run_cli("scan", str(tmp_path), "--output-format", "json")
    assert (tmp_path / ".stabfix_cache").is_dir()
    second = run_cli("scan", str(tmp_path), "--output-format", "json")
    assert first.stdout == second.stdout
    target.write_text("import torch\n")
    third = json_report(run_cli("scan", str(tmp_path), "--output-format", "json"))
    assert third["findings"] == []


def test_cache_hit_does_not_reparse(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    run_cli("scan", str(tmp_path))
    # Corrupt the catalog's parser entry point: a cache hit must not need it.
    code = (
        "import sys, libcst\n"
        "libcst.parse_module = None\n"
        "import stabfix.cli\n"
        f"sys.argv = ['stabfix', 'scan', {str(target)!r}, '--output-format', 'json', '--jobs', '1']\n"
        "stabfix.cli.main()\n"
    )
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 1, result.stderr
    assert json_report(result)["findings"][0]["code"] == "SF101"


def test_a_rule_shipped_off_runs_only_when_selected():
    from dataclasses import replace

    from stabfix.catalog import load_catalog, selected_codes

    catalog = dict(load_catalog())
    catalog["SF201"] = replace(catalog["SF201"], enabled_by_default=False)
    assert "SF201" not in selected_codes(catalog, [], [], "config")
    assert "SF201" in selected_codes(catalog, ["ALL"], [], "config")
    assert "SF201" in selected_codes(catalog, ["cuda-cleanup-in-step"], [], "config")
    assert "SF201" in selected_codes(catalog, ["SF2"], [], "config")
