"""A scan runs with the cyclic collector tuned for libcst's large trees, and leaves the caller's process
as it found it (stabfix is also used as a library)."""

from __future__ import annotations

import gc

from stabfix import scan_runner
from stabfix.scan_runner import Task, run_tasks


def test_files_are_analysed_with_fewer_collections_and_the_thresholds_are_restored(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text("import torch\nloss.backward()\n")
    seen = []
    analyse = scan_runner.process

    def recording(task):
        seen.append(gc.get_threshold())
        return analyse(task)

    monkeypatch.setattr(scan_runner, "process", recording)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        run_tasks([Task(str(path), "train.py", ("SF402",), "scan", False)], 1, None)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
    assert seen and seen[0][0] > 700 * 10
