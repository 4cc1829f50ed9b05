"""A scan runs with the cyclic collector tuned for libcst's large trees, and leaves the caller's process
as it found it (stabfix is also used as a library)."""

from __future__ import annotations

import gc
import weakref

from stabfix import scan_runner
from stabfix.scan_runner import Task, run_tasks


def test_files_are_analysed_with_fewer_collections_and_the_thresholds_are_restored(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text("import torch\nloss.backward()\n")
    seen = []
    analyse = scan_runner.process

    def recording(task, **how):
        seen.append(gc.get_threshold())
        return analyse(task, **how)

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
    # counted once the scan has handed back what it set aside (`gc.get_objects` does not list frozen objects)
    left = [o for o in gc.get_objects() if type(o) is FileModel and not any(o is e for e in earlier)]
    assert outcome.result.error is None and outcome.result.findings
    assert left == []


def _importing_files(folder, count):
    """`count` training files, each importing its model class from a file of its own."""
    files = []
    for index in range(count):
        (folder / f"models_{index}.py").write_text(
            "import torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            f"class Net{index}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
            "        return F.softmax(self.fc(x), dim=1)\n"
        )
        train = folder / f"train_{index}.py"
        train.write_text(
            f"import torch.nn.functional as F\nfrom models_{index} import Net{index}\n\n\ndef train(loader, opt):\n"
            f"    model = Net{index}()\n    for x, y in loader:\n        loss = F.cross_entropy(model(x), y)\n"
            "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
        )
        files.append(str(train))
    return files


def _dropped_models_alive_after_each_file(tmp_path, monkeypatch, full_collection_after):
    """Scan files whose analyses build other files' models, with a project that keeps one model; after
    each file, how many models the project has dropped are still alive. Each built model is given a
    cycle of its own: a dropped model is then garbage only the cyclic collector frees, as a model whose
    facts refer to each other is."""
    from stabfix.project import Project, ProjectIndex, definitions

    monkeypatch.setattr(definitions, "_MODELS_KEPT", 1)
    monkeypatch.setattr(scan_runner, "_DROPPED_MODELS_PER_FULL_COLLECTION", full_collection_after)
    built = []
    build = definitions.Project._build

    def recording(self, path, text, parts):
        made = build(self, path, text, parts)
        if made[0] is not None:
            model = made[0][1]
            model.cycle = [model]
            built.append(weakref.ref(model))
        return made

    monkeypatch.setattr(definitions.Project, "_build", recording)
    files = _importing_files(tmp_path, 6)
    project = Project(ProjectIndex(files + [str(tmp_path / f"models_{i}.py") for i in range(6)], [str(tmp_path)]))
    # one rule, whose analysis builds one model of the other file (its `activations`: a softmax reaching
    # cross_entropy); with every rule, a call of the model also builds that file's summaries
    codes = ("SF410",)
    alive_after = []
    analyse = scan_runner.process

    def counting(task, **how):
        outcome = analyse(task, **how)
        kept = {id(built[1]) for built in project._models.values() if built is not None}
        alive_after.append(sum(1 for ref in built if ref() is not None and id(ref()) not in kept))
        return outcome

    monkeypatch.setattr(scan_runner, "process", counting)
    run = run_tasks([Task(path, path, codes, "scan", False) for path in files], 1, None, project=project)
    assert all(result.error is None and result.findings for result in run.results)
    assert len(built) == 6 and project.models_dropped == 5  # each file built one model and dropped the one before
    return alive_after


def test_what_outlives_a_file_is_not_walked_again_and_dropped_models_wait_for_a_full_collection(tmp_path, monkeypatch):
    # a dropped model was set aside (frozen) with what outlived its file: no collection of the scan frees it
    alive = _dropped_models_alive_after_each_file(tmp_path, monkeypatch, full_collection_after=1000)
    assert alive == [0, 1, 2, 3, 4, 5]


def test_dropped_models_are_freed_once_the_project_dropped_the_bound(tmp_path, monkeypatch):
    alive = _dropped_models_alive_after_each_file(tmp_path, monkeypatch, full_collection_after=2)
    assert alive == [0, 1, 0, 1, 0, 1]


def test_a_scan_leaves_what_the_caller_froze_as_it_was(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import torch\nloss.backward()\n")
    task = Task(str(path), "train.py", ("SF402",), "scan", False)
    assert gc.get_freeze_count() == 0
    run_tasks([task], 1, None)
    assert gc.get_freeze_count() == 0  # what the scan set aside is handed back to the collector
    callers = [[]]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run_tasks([task], 1, None)
        # the caller's frozen objects stay frozen (`gc.get_objects` lists only the others), nothing is added
        assert not any(item is callers for item in gc.get_objects())
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    assert any(item is callers for item in gc.get_objects())


def test_forked_workers_set_aside_as_the_parent_did_and_the_parent_hands_everything_back(tmp_path, monkeypatch):
    # the parent sets aside what it allocated before it forks (the engine's modules): each worker must go on
    # setting aside what outlives its files (not take the parent's frozen objects for a caller's own), and the
    # parent must hand back what it set aside when the run ends
    import os
    import sys

    import pytest

    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only (elsewhere they are spawned, with nothing of the parent's)")
    log = tmp_path / "workers.log"
    analyse = scan_runner.process

    def recording(task, **how):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {scan_runner._set_aside.active} {gc.get_freeze_count() > 0}\n")
        return analyse(task, **how)

    monkeypatch.setattr(scan_runner, "process", recording)
    files = []
    for index in range(scan_runner.SERIAL_THRESHOLD + 4):
        path = tmp_path / f"train_{index}.py"
        path.write_text("import torch\nloss.backward()\n")
        files.append(Task(str(path), path.name, ("SF402",), "scan", False))
    assert gc.get_freeze_count() == 0
    run = run_tasks(files, 2, None)
    assert len(run.results) == len(files)
    seen = [line.split() for line in log.read_text().splitlines()]
    assert len(seen) == len(files) and all(pid != str(os.getpid()) for pid, _, _ in seen)  # analysed by workers
    assert all(active == "True" and frozen == "True" for _, active, frozen in seen)
    assert gc.get_freeze_count() == 0


def _training_files(folder, count):
    files = []
    for index in range(count):
        path = folder / f"train_{index}.py"
        path.write_text(
            "import torch\n\ndef train(model, loader, opt):\n    total = 0\n    for x, y in loader:\n"
            "        loss = torch.nn.functional.cross_entropy(model(x), y)\n        opt.zero_grad()\n"
            "        loss.backward()\n        opt.step()\n        total += loss\n    return total\n"
        )
        files.append(str(path))
    return files


def test_no_collection_interrupts_a_file_and_the_last_file_is_left_to_the_caller(tmp_path, monkeypatch):
    # a collection during an analysis walks the file's whole live tree and model to free almost nothing
    from stabfix import engine
    from stabfix.catalog import load_catalog
    from stabfix.model import FileModel

    monkeypatch.setattr(scan_runner, "_COLLECTOR_THRESHOLDS", (50, 10, 10))  # a collection every 50 allocations
    inside, collections = [False], []
    analyse = engine._analyse

    def marking(*args):
        inside[0] = True
        try:
            return analyse(*args)
        finally:
            inside[0] = False

    monkeypatch.setattr(engine, "_analyse", marking)

    def record(phase, info):
        if phase == "start":
            collections.append(inside[0])

    codes = tuple(sorted(load_catalog(examples=False)))
    tasks = [Task(path, path, codes, "scan", False) for path in _training_files(tmp_path, 3)]
    gc.collect()
    earlier = {id(o) for o in gc.get_objects() if type(o) is FileModel}
    gc.callbacks.append(record)
    try:
        run = run_tasks(tasks, 1, None)
    finally:
        gc.callbacks.remove(record)
    assert all(result.error is None and result.findings for result in run.results)
    # the collections after the first two files, none during any analysis; the last file's cycles are left
    # for the caller's collections (the CLI exits without freeing them)
    assert collections.count(True) == 0 and len(collections) >= 2
    assert [o for o in gc.get_objects() if type(o) is FileModel and id(o) not in earlier]
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is FileModel and id(o) not in earlier]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_an_analysis_leaves_the_collector_as_it_found_it(tmp_path):
    from stabfix.catalog import load_catalog
    from stabfix.checkers import checker_classes
    from stabfix.engine import analyse_text

    specs = load_catalog()
    classes = [cls for code, cls in sorted(checker_classes().items()) if code in specs]
    text = open(_training_files(tmp_path, 1)[0], encoding="utf-8").read()
    assert gc.isenabled()
    assert analyse_text(text, "train.py", classes, specs).findings
    assert gc.isenabled()
    gc.disable()
    try:
        analyse_text(text, "train.py", classes, specs)
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()
