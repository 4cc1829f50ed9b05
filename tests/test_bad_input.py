"""Bad input: one clear line naming the file and the problem, the run goes on, exit code per contract."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import CLEAN_SOURCE, SF101_SOURCE, json_report, write


def _scan_json(run_cli, *paths):
    result = run_cli("scan", *map(str, paths), "--output-format", "json", "--no-cache")
    assert "Traceback" not in result.stderr + result.stdout
    return result, json_report(result)


def _error_for(report, name):
    return [e["message"] for e in report["errors"] if e["path"].endswith(name)]


def test_nonexistent_path_exits_2_and_still_scans_the_rest(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result, report = _scan_json(run_cli, tmp_path / "missing", tmp_path / "train.py")
    assert result.returncode == 2
    assert _error_for(report, "missing") == ["path does not exist"]
    assert [f["code"] for f in report["findings"]] == ["SF101"]


def test_nonexistent_path_in_text_mode_is_one_line(tmp_path, run_cli):
    result = run_cli("scan", str(tmp_path / "nope.py"), "--no-cache")
    assert result.returncode == 2
    assert "nope.py: error: path does not exist" in result.stderr and result.stdout.startswith("1 path could not")


def test_directory_without_python_files_exits_0_with_a_warning(tmp_path, run_cli):
    write(tmp_path, "notes.txt", "hello")
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 0
    assert "no Python files found" in result.stderr


def test_syntax_error_is_reported_and_others_still_scanned(tmp_path, run_cli):
    write(tmp_path, "a_broken.py", "def f(:\n    pass\n")
    write(tmp_path, "b_train.py", SF101_SOURCE)
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    (message,) = _error_for(report, "a_broken.py")
    assert message.startswith("syntax error at line 1")
    assert [f["path"].rsplit("/", 1)[-1] for f in report["findings"]] == ["b_train.py"]


def test_syntax_error_in_a_file_a_rule_would_parse(tmp_path, run_cli):
    write(tmp_path, "broken.py", "x.requires_grad_(True\n")
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert _error_for(report, "broken.py")[0].startswith("syntax error")


def test_python2_file_is_named_as_such(tmp_path, run_cli):
    write(tmp_path, "old.py", 'print "hello"\nexec "x = 1"\n')
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert "Python 2" in _error_for(report, "old.py")[0]


def test_non_utf8_bytes_are_reported(tmp_path, run_cli):
    write(tmp_path, "latin.py", b"# caf\xe9\nx = 1\n")
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert _error_for(report, "latin.py") == ["not valid UTF-8: byte 0xe9 at offset 5"]


def test_declared_latin1_encoding_is_honoured(tmp_path, run_cli):
    write(tmp_path, "latin.py", b"# -*- coding: latin-1 -*-\n# caf\xe9\nx = 1\n")
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 0 and report["errors"] == []


def test_binary_file_named_py(tmp_path, run_cli):
    write(tmp_path, "blob.py", bytes(range(256)) * 4)
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert "binary file" in _error_for(report, "blob.py")[0]


def test_empty_file_is_fine(tmp_path, run_cli):
    write(tmp_path, "empty.py", "")
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 0 and report["errors"] == []


def test_symlink_loop(tmp_path, run_cli):
    os.symlink(tmp_path / "loop.py", tmp_path / "loop.py")
    write(tmp_path, "ok.py", CLEAN_SOURCE)
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert _error_for(report, "loop.py") == ["symlink loop, skipped"]


def test_directory_symlink_loop(tmp_path, run_cli):
    write(tmp_path, "pkg/ok.py", CLEAN_SOURCE)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert "symlink loop" in _error_for(report, "again")[0]
    assert report["summary"]["files_scanned"] == 1


def test_unreadable_file(tmp_path, monkeypatch):
    # Root reads any file whatever its mode, so simulate the OS refusing the read.
    from stabfix import scan_runner as runner

    target = write(tmp_path, "secret.py", CLEAN_SOURCE)
    real_open = os.open

    def deny(path, *args, **kwargs):
        if os.fspath(path) == str(target):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    outcome = runner.process(runner.Task(str(target), "secret.py", ("SF101",), "scan", False))
    assert outcome.result.error is not None
    assert outcome.result.error.message == "permission denied"


def test_unreadable_file_via_cli_when_not_root(tmp_path, run_cli):
    if os.geteuid() == 0:
        pytest.skip("root can read files whatever their mode; covered by test_unreadable_file")
    target = write(tmp_path, "secret.py", CLEAN_SOURCE)
    target.chmod(0)
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert _error_for(report, "secret.py") == ["permission denied"]


def test_very_large_file_is_skipped_with_a_reason(tmp_path, run_cli):
    write(tmp_path, "huge.py", "x = 1\n" * 2_000_000)  # 12 MB
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1
    assert "file too large" in _error_for(report, "huge.py")[0]


@pytest.mark.parametrize(
    "name,content,expected",
    [
        ("pyproject.toml", "[tool.stabfix\nselect = [", "malformed TOML"),
        ("stabfix.yaml", "select: [SF101\nignore: {", "malformed YAML"),
        ("stabfix.yaml", "selekt: [SF101]\n", "unknown config key 'selekt'"),
        ("pyproject.toml", '[tool.stabfix]\nselect = ["SF999"]\n', "unknown rule selector 'SF999'"),
        ("stabfix.yaml", "- just\n- a list\n", "expected a mapping"),
        ("stabfix.yaml", "select: 3\n", "'select' must be a list of strings"),
        ("stabfix.yaml", "exclude: ['build\\']\n", "'exclude' has an invalid pattern 'build\\\\'"),
        ("stabfix.yaml", "exclude: ['!']\n", "'exclude' has an invalid pattern '!'"),
        ("pyproject.toml", '[tool.stabfix]\nexclude = ["gen_[z-a].py"]\n', "invalid pattern 'gen_[z-a].py' (bad character range"),
        ("stabfix.yaml", "per-file-ignores:\n  'tests\\': [SF101]\n", "'per-file-ignores' has an invalid pattern"),
    ],
)
def test_broken_config_exits_2_with_the_problem_named(tmp_path, run_cli, name, content, expected):
    write(tmp_path, name, content)
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 2
    assert expected in result.stderr
    assert name in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_scanning_never_executes_the_code(tmp_path, run_cli):
    marker = tmp_path / "executed"
    write(tmp_path, "evil.py", f"open({str(marker)!r}, 'w').write('x')\nimport torch\nt = torch.zeros(1, requires_grad=True)\n")
    run_cli("scan", str(tmp_path), "--no-cache")
    run_cli("apply", str(tmp_path))
    assert not marker.exists()


@pytest.mark.parametrize(
    "arguments",
    [["--select", ""], ["--select", ","], ["--select", "ALL", "--ignore", "ALL"], ["--ignore", "ALL"]],
)
@pytest.mark.parametrize("command", ["scan", "apply"])
def test_an_empty_rule_selection_is_an_error_not_a_pass(tmp_path, run_cli, command, arguments):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli(command, str(tmp_path), *arguments, "--no-cache")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: no rules selected: --select/--ignore and the config's select/ignore leave nothing to run"
    ]
    assert "All checks passed" not in result.stdout
    assert target.read_text() == SF101_SOURCE


def test_a_config_that_ignores_every_rule_is_an_error(tmp_path, run_cli):
    write(tmp_path, "stabfix.yaml", "ignore: [ALL]\n")
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 2 and "no rules selected" in result.stderr


def _run_with_timeout(*args, timeout=60):
    # a scan that reads a FIFO or /dev/zero never ends: fail in a minute rather than hang the suite
    return subprocess.run(
        [sys.executable, "-m", "stabfix", *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs FIFOs and /dev/zero")
def test_fifos_devices_and_links_to_dev_zero_are_skipped_unread(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / ".gitignore")  # read by discovery, not by the analysis
    os.symlink("/dev/zero", tmp_path / "zero.py")
    write(tmp_path, "train.py", SF101_SOURCE)
    result = _run_with_timeout("scan", str(tmp_path), "--output-format", "json", "--no-cache")
    report = json_report(result)
    assert result.returncode == 1
    assert _error_for(report, "pipe.py") == ["not a regular file (a FIFO), skipped"]
    assert _error_for(report, "zero.py") == ["not a regular file (a character device), skipped"]
    assert [finding["code"] for finding in report["findings"]] == ["SF101"]
    named = _run_with_timeout("scan", "/dev/zero", "--no-cache")
    assert named.returncode == 1 and "/dev/zero: error: not a regular file (a character device)" in named.stderr


def test_a_gitignore_with_lines_git_cannot_parse_keeps_the_others(tmp_path, run_cli):
    write(tmp_path, ".gitignore", "!\nbuild\\\n[z-a]\ngenerated.py\n")
    write(tmp_path, "generated.py", SF101_SOURCE)
    write(tmp_path, "train.py", SF101_SOURCE)
    result, report = _scan_json(run_cli, tmp_path)
    assert result.returncode == 1 and report["errors"] == []
    assert [Path(finding["path"]).name for finding in report["findings"]] == ["train.py"]


def test_an_unreadable_folder_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    # Root enters any folder, so the kernel's refusal is simulated: the folder cannot be listed, nothing in it
    # can be looked at. (test_an_unreadable_folder_when_not_root shows the same with real permissions.)
    from typer.testing import CliRunner

    from stabfix.cli import app

    write(tmp_path, "train.py", SF101_SOURCE)
    write(tmp_path, "locked/inner/hidden.py", SF101_SOURCE)
    locked = str(tmp_path / "locked")
    real_stat, real_scandir = os.stat, os.scandir

    def refused(path) -> bool:
        return os.fspath(path).startswith(locked + os.sep)

    def stat(path, *args, **kwargs):
        if refused(path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)
    result = CliRunner().invoke(app, ["scan", str(tmp_path), "--no-cache"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1
    assert [line for line in result.output.splitlines() if "locked" in line] == [
        f"{Path(locked).as_posix()}: error: permission denied, folder skipped"
    ]
    assert "train.py:6:" in result.output


def _run_unprivileged(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Root may enter any folder, so as root the CLI runs as `nobody` (uid 65534)."""

    def drop_root():
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)

    return subprocess.run(
        [sys.executable, "-m", "stabfix", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": "0"}, preexec_fn=drop_root,
    )


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_an_unreadable_folder_when_not_root():
    # outside pytest's tmp_path, which only root may enter
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        root.chmod(0o755)
        write(root, "train.py", SF101_SOURCE).chmod(0o644)
        write(root, "locked/inner/hidden.py", SF101_SOURCE)
        (root / "locked").chmod(0)
        try:
            if _run_unprivileged("--version", cwd=root).returncode != 0:
                pytest.skip("stabfix cannot run as an unprivileged user here")
        except OSError:
            pytest.skip("the interpreter cannot be run by an unprivileged user here")
        try:
            whole = _run_unprivileged("scan", ".", "--no-cache", cwd=root)
            inside = _run_unprivileged("scan", "locked/inner", "--no-cache", cwd=root)
        finally:
            (root / "locked").chmod(0o755)
    assert "Traceback" not in whole.stderr + whole.stdout + inside.stderr + inside.stdout
    assert whole.returncode == 1
    assert "locked: error: permission denied, folder skipped" in whole.stderr.splitlines()
    assert "train.py:6:" in whole.stdout
    assert inside.returncode == 2
    assert "locked/inner: error: permission denied" in inside.stderr.splitlines()
