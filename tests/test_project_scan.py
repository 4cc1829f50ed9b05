"""`stabfix scan` across files: a model class of another scanned file is seen (SF410), the same with one
or two workers, any hash seed and any listing order; and the cache rescans a file when a file it
consulted changes, or when a file is added or removed that changes what its imports resolve to, and
serves every other file from the cache."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import json_report, write
from stabfix.cache import CACHE_DIR_NAME

NETS_SOFTMAX = '''import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)
'''
NETS_LOGITS = NETS_SOFTMAX.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)")
TRAIN = '''import torch
import torch.nn as nn
from nets import Net


def train(loader):
    model = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''
UNRELATED = '''import torch.nn.functional as F


def step(model, x, y):
    return F.cross_entropy(F.softmax(model(x), dim=1), y)
'''
CACHED = "served from the cache"


def _project(root: Path) -> None:
    write(root, "lib/nets.py", NETS_SOFTMAX)
    write(root, "app/train.py", TRAIN)
    write(root, "app/unrelated.py", UNRELATED)


def _scan(run_cli, root: Path, *extra: str, env: dict | None = None):
    result = run_cli("scan", *extra, "--output-format", "json", "--jobs", "1", cwd=root, env=env)
    assert result.returncode in (0, 1), result.stderr
    return json_report(result)


def _messages(report: dict) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["path"], []).append(finding["message"])
    return found


def _mark_cached(root: Path) -> None:
    """Every cached finding's message says it came from the cache (a rescan writes the real one)."""
    (cache_file,) = list((root / CACHE_DIR_NAME).glob("*.json"))
    data = json.loads(cache_file.read_text(encoding="utf-8"))
    for key, findings in data["entries"].items():
        data["entries"][key] = [{**item, "message": CACHED} for item in findings]
    cache_file.write_text(json.dumps(data), encoding="utf-8")


def test_a_model_class_of_another_file_reaches_the_loss(tmp_path, run_cli):
    _project(tmp_path)
    report = _scan(run_cli, tmp_path, ".", "--no-cache")
    train = [f for f in report["findings"] if f["path"] == "app/train.py"]
    assert [(f["code"], f["line"]) for f in train] == [("SF410", 11)]
    assert "`nets.Net.forward`" in train[0]["message"]


def test_same_findings_with_one_or_two_workers_any_seed_and_order(tmp_path, run_cli):
    _project(tmp_path)
    for index in range(10):  # more files than the serial threshold, so two workers really run
        write(tmp_path, f"app/extra_{index}.py", TRAIN.replace("def train", f"def train_{index}"))
    outputs = set()
    for jobs, seed, order in (("1", "1", (".",)), ("2", "2", (".",)), ("2", "3", ("lib", "app")), ("2", "4", ("app", "lib"))):
        result = run_cli("scan", *order, "--no-cache", "--output-format", "json", "--jobs", jobs, cwd=tmp_path, env={"PYTHONHASHSEED": seed})
        assert result.returncode == 1, result.stderr
        report = json_report(result)
        outputs.add(json.dumps(report["findings"], sort_keys=True))
        assert len([f for f in report["findings"] if f["code"] == "SF410"]) == 12
    assert len(outputs) == 1


def test_editing_a_helper_rescans_its_dependents_only(tmp_path, run_cli):
    _project(tmp_path)
    first = _messages(_scan(run_cli, tmp_path, "."))
    assert set(first) == {"app/train.py", "app/unrelated.py"}
    _mark_cached(tmp_path)
    assert _messages(_scan(run_cli, tmp_path, ".")) == {"app/train.py": [CACHED], "app/unrelated.py": [CACHED]}

    # an edit of the helper that keeps its meaning: the dependent is analysed again, the other file is not
    write(tmp_path, "lib/nets.py", "# the network\n" + NETS_SOFTMAX)
    after = _messages(_scan(run_cli, tmp_path, "."))
    assert after["app/train.py"] == first["app/train.py"]
    assert after["app/unrelated.py"] == [CACHED]

    # an edit that changes the answer: the dependent's finding goes
    write(tmp_path, "lib/nets.py", NETS_LOGITS)
    assert _messages(_scan(run_cli, tmp_path, ".")) == {"app/unrelated.py": [CACHED]}


def test_adding_or_removing_a_file_that_changes_an_import_rescans(tmp_path, run_cli):
    _project(tmp_path)
    _scan(run_cli, tmp_path, ".")
    _mark_cached(tmp_path)
    # a `nets.py` beside the script is what `from nets import Net` imports now
    write(tmp_path, "app/nets.py", NETS_LOGITS)
    assert _messages(_scan(run_cli, tmp_path, ".")) == {"app/unrelated.py": [CACHED]}
    _mark_cached(tmp_path)
    (tmp_path / "app/nets.py").unlink()
    after = _messages(_scan(run_cli, tmp_path, "."))
    assert after["app/unrelated.py"] == [CACHED]
    assert after["app/train.py"] != [CACHED] and "`nets.Net.forward`" in after["app/train.py"][0]
