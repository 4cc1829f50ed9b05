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


def test_what_a_file_leaves_in_cycles_is_freed_when_the_file_is_done(tmp_path):
    # the model's facts refer to each other (bindings and their uses): reference counting alone would keep
    # a file's model until a collection that, with thresholds this high, might come many files later
    from stabfix.catalog import load_catalog
    from stabfix.model import FileModel

    path = tmp_path / "train.py"
    path.write_text(
        "import torch\n\ndef train(model, loader, opt):\n    total = 0\n    for x, y in loader:\n"
        "        loss = torch.nn.functional.cross_entropy(model(x), y)\n        opt.zero_grad()\n"
        "        loss.backward()\n        opt.step()\n        total += loss\n    return total\n"
    )
    codes = tuple(sorted(load_catalog(examples=False)))
    gc.collect()
    earlier = [o for o in gc.get_objects() if type(o) is FileModel]  # other tests' models, kept by them
    with scan_runner._fewer_collections():
        outcome = scan_runner.process(Task(str(path), "train.py", codes, "scan", False))
        left = [o for o in gc.get_objects() if type(o) is FileModel and not any(o is e for e in earlier)]
    assert outcome.result.error is None and outcome.result.findings
    assert left == []
