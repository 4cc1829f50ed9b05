"""`stabfix apply` never loses a user's work: an edit made while it runs, the file's links, mode and owner,
a read-only file, and whatever a Ctrl-C, SIGTERM or kill -9 of the run leaves behind."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import SF101_FIXED, SF101_SOURCE, json_report, write
from stabfix import scan_runner
from stabfix.cli import app
from stabfix.source import CHANGED_MESSAGE

USER_EDIT = "# a line the user added while apply ran\n"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and forks")


def _edit_during_the_run(monkeypatch, target: Path, step: str) -> None:
    """The user saves the file after stabfix read it and before it writes it back."""
    real = getattr(scan_runner, step)

    def edit_then_step(*args, **kwargs):
        with target.open("a", encoding="utf-8") as handle:
            handle.write(USER_EDIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(scan_runner, step, edit_then_step)


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_a_file_edited_while_apply_runs_is_left_as_the_user_saved_it(tmp_path, monkeypatch, output_format):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    _edit_during_the_run(monkeypatch, target, "fix_text")
    result = CliRunner().invoke(app, ["apply", str(target), "--output-format", output_format])
    assert target.read_text() == SF101_SOURCE + USER_EDIT
    assert result.exit_code == 1, result.output
    assert CHANGED_MESSAGE in result.output
    if output_format == "json":
        report = json.loads(result.output)
        assert report["errors"] == [{"path": report["errors"][0]["path"], "message": CHANGED_MESSAGE}]
        assert report["summary"]["fixes_applied"] == 0
        assert [finding["code"] for finding in report["findings"]] == ["SF101"]  # still there, not fixed
    assert sorted(os.listdir(tmp_path)) == ["train.py"]


def test_a_file_edited_while_add_noqa_runs_is_left_as_the_user_saved_it(tmp_path, monkeypatch):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    _edit_during_the_run(monkeypatch, target, "add_noqa")
    result = CliRunner().invoke(app, ["scan", "--add-noqa", str(target)])
    assert target.read_text() == SF101_SOURCE + USER_EDIT
    assert result.exit_code == 1 and CHANGED_MESSAGE in result.output


def test_a_symlinked_file_gets_its_target_fixed_and_stays_a_link(tmp_path, run_cli):
    target = write(tmp_path, "elsewhere/train.py", SF101_SOURCE)
    link = tmp_path / "project" / "train.py"
    link.parent.mkdir()
    link.symlink_to(target)
    result = run_cli("apply", str(link.parent))
    assert result.returncode == 0, result.stdout + result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == SF101_FIXED


def test_a_file_reached_by_two_paths_is_fixed_once_whatever_the_job_count(tmp_path, run_cli):
    # a symlink and its target in one tree, with enough other files for the run to go parallel
    for index in range(12):
        write(tmp_path, f"other_{index:02d}.py", SF101_SOURCE)
    target = write(tmp_path, "b_target.py", SF101_SOURCE)
    (tmp_path / "a_link.py").symlink_to(target)
    reports = []
    for jobs in ("1", "2"):
        for path in [target, *tmp_path.glob("other_*.py")]:
            path.write_text(SF101_SOURCE)
        result = run_cli("apply", str(tmp_path), "--jobs", jobs, "--output-format", "json")
        report = json_report(result)
        assert result.returncode == 0 and report["errors"] == [], report["errors"]
        reports.append(report)
        assert (tmp_path / "a_link.py").is_symlink() and target.read_text() == SF101_FIXED
    assert reports[0] == reports[1]


def test_hard_links_stay_one_file(tmp_path, run_cli):
    original = write(tmp_path, "project/train.py", SF101_SOURCE)
    outside = tmp_path / "backup_of_train.py"
    os.link(original, outside)
    inode = original.stat().st_ino
    result = run_cli("apply", str(original.parent))
    assert result.returncode == 0, result.stdout + result.stderr
    assert original.stat().st_ino == inode and original.stat().st_nlink == 2
    assert outside.read_text() == original.read_text() == SF101_FIXED
    assert sorted(os.listdir(original.parent)) == ["train.py"]  # no backup left behind


def test_an_in_place_write_that_fails_half_way_puts_the_original_back(tmp_path, monkeypatch):
    # a hard-linked file is written into its own inode; the disk fills up after part of the new content
    from stabfix import source

    original = write(tmp_path, "project/train.py", SF101_SOURCE)
    os.link(original, tmp_path / "backup_of_train.py")
    real_overwrite = source._overwrite
    attempts = []

    def disk_full_on_the_first_write(handle, data):
        attempts.append(data)
        if len(attempts) == 1:
            handle.seek(0)
            handle.write(data[:10])  # what a write cut short leaves
            raise OSError(28, "No space left on device")
        real_overwrite(handle, data)

    monkeypatch.setattr(source, "_overwrite", disk_full_on_the_first_write)
    result = CliRunner().invoke(app, ["apply", str(original)])
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output
    assert original.read_text() == SF101_SOURCE  # the user's content, whole
    assert sorted(os.listdir(original.parent)) == ["train.py"]  # and no backup left behind


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_owner_group_and_mode_are_kept(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    os.chown(target, 4321, 4322)
    target.chmod(0o640)
    result = run_cli("apply", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    status = target.stat()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (4321, 4322, 0o640)
    assert target.read_text() == SF101_FIXED


def test_a_read_only_file_is_reported_not_rewritten(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    writable = write(tmp_path, "other.py", SF101_SOURCE)
    target.chmod(0o444)
    result = run_cli("apply", str(tmp_path), "--output-format", "json")
    report = json_report(result)
    assert result.returncode == 1
    assert [(Path(error["path"]).name, error["message"]) for error in report["errors"]] == [
        ("train.py", "read-only file, not rewritten")
    ]
    assert target.read_text() == SF101_SOURCE and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert writable.read_text() == SF101_FIXED


# --- stopping a parallel run -------------------------------------------------------------------------------------

SLOW_FILE = "".join(SF101_SOURCE.replace("train_step", f"train_step_{index}") for index in range(20))
SLOW_FILE_FIXED = "".join(SF101_FIXED.replace("train_step", f"train_step_{index}") for index in range(20))
RUN_FILES = 60  # with two workers, seconds of work: the run is still going when it is stopped


def _start_parallel_apply(tmp_path: Path) -> tuple[subprocess.Popen, list[Path]]:
    files = [write(tmp_path, f"train_{index:03d}.py", SLOW_FILE) for index in range(RUN_FILES)]
    command = [sys.executable, "-m", "stabfix", "apply", "--jobs", "2", str(tmp_path)]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    # its own session: a signal to its process group is what Ctrl-C in a terminal sends
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True
    )
    return process, files


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie nobody reaped (pid 1 of a container may not) runs no code


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _record_workers(process: subprocess.Popen, workers: set[int]) -> None:
    def two_started() -> bool:
        workers.update(_children(process.pid))
        return len(workers) >= 2 or process.poll() is not None

    assert _wait_for(two_started, 60), "the workers never started"
    assert process.poll() is None, "the run ended before it could be stopped; give it more files"


def _rewritten(files: list[Path]) -> list[Path]:
    return [path for path in files if path.read_text() != SLOW_FILE]


def _kill_leftovers(workers: set[int]) -> None:
    """Whatever a test found, it leaves no process of its run behind."""
    for pid in workers:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _stop_after_the_first_write(process: subprocess.Popen, files: list[Path], send) -> tuple[bool, str]:
    """Send a stop once the first file is rewritten; (did the workers end with the run?, the run's stderr)."""
    workers: set[int] = set()
    try:
        _record_workers(process, workers)
        assert _wait_for(lambda: bool(_rewritten(files)) or process.poll() is not None, 60)
        assert process.poll() is None, "the run ended before it could be stopped; give it more files"
        send()
        process.wait(timeout=30)
        # only now read the pipes: a worker that outlived the run would hold them open
        workers_ended = _wait_for(lambda: not any(map(_alive, workers)), 10)
    finally:
        process.kill()
        _kill_leftovers(workers)
    return workers_ended, process.stderr.read()


def _listed_as_rewritten(stderr: str) -> set[str]:
    return {Path(line.split(": ", 1)[1]).name for line in stderr.splitlines() if line.startswith("rewritten: ")}


def _assert_each_file_whole_and_listed(files: list[Path], stderr: str, tmp_path: Path) -> None:
    for path in files:
        assert path.read_text() in (SLOW_FILE, SLOW_FILE_FIXED), f"{path.name} was left half-written"
    rewritten = {path.name for path in _rewritten(files)}
    assert rewritten and len(rewritten) < len(files)
    assert _listed_as_rewritten(stderr) == rewritten
    assert f"{len(rewritten)} file" in stderr.splitlines()[0]
    assert not [name for name in os.listdir(tmp_path) if name.endswith((".tmp", ".bak"))]


@linux_only
def test_ctrl_c_stops_the_run_and_lists_the_files_already_rewritten(tmp_path):
    process, files = _start_parallel_apply(tmp_path)
    workers_ended, stderr = _stop_after_the_first_write(process, files, lambda: os.killpg(process.pid, signal.SIGINT))
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    _assert_each_file_whole_and_listed(files, stderr, tmp_path)
    assert workers_ended, "workers outlived the run"


@linux_only
def test_sigterm_stops_the_run_and_lists_the_files_already_rewritten(tmp_path):
    process, files = _start_parallel_apply(tmp_path)
    workers_ended, stderr = _stop_after_the_first_write(process, files, lambda: os.kill(process.pid, signal.SIGTERM))
    assert process.returncode == 143, stderr
    _assert_each_file_whole_and_listed(files, stderr, tmp_path)
    assert workers_ended, "workers outlived the run"


@linux_only
def test_workers_die_with_a_parent_killed_by_sigkill(tmp_path):
    process, _ = _start_parallel_apply(tmp_path)
    workers: set[int] = set()
    try:
        _record_workers(process, workers)
        process.kill()
        process.wait(timeout=30)
        assert _wait_for(lambda: not any(map(_alive, workers)), 10), "workers outlived a parent killed by SIGKILL"
    finally:
        _kill_leftovers(workers)
