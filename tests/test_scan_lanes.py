"""Which worker of a parallel scan gets which files (stabfix.scan_lanes): every file exactly once whatever
the workers' timing, neighbours together, the last runs small; and what a scan leaves behind (its report,
its cache file) is the same with one worker or several."""

from __future__ import annotations

import multiprocessing
import random

import pytest

from helpers import write
from stabfix.cache import CACHE_DIR_NAME
from stabfix.scan_lanes import MOST_FILES_A_RUN, Lanes


def _claim_all(weights: list[int], workers: int, seed: int) -> dict[int, list[range]]:
    """Every lane claims runs, in a random interleaving (the workers' timing), until none is left."""
    lanes = Lanes(weights, workers, multiprocessing.get_context("spawn"))
    joined = [lanes.join() for _ in range(workers)]
    runs: dict[int, list[range]] = {lane: [] for lane in joined}
    pick = random.Random(seed)
    active = list(joined)
    while active:
        lane = pick.choice(active)
        run = lanes.claim(lane)
        if run:
            runs[lane].append(run)
        else:
            active.remove(lane)
    return runs


@pytest.mark.parametrize("workers", [2, 3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_file_is_taken_once_whatever_the_timing(workers, seed):
    weights = [random.Random(seed + size).randrange(0, 200_000) for size in range(300)]
    runs = _claim_all(weights, workers, seed)
    taken = sorted(index for lane_runs in runs.values() for run in lane_runs for index in run)
    assert taken == list(range(len(weights)))
    assert all(0 < len(run) <= MOST_FILES_A_RUN for lane_runs in runs.values() for run in lane_runs)


def test_two_workers_take_the_two_ends_and_meet_once():
    # each worker's files are one stretch of the path order: files of one folder (which ask about the
    # same other files) stay with one worker except around the point where the two meet
    weights = [1000 + 37 * (index % 11) for index in range(200)]
    runs = _claim_all(weights, 2, seed=7)
    front = sorted(index for run in runs[0] for index in run)
    back = sorted(index for run in runs[1] for index in run)
    assert front == list(range(len(front)))
    assert back == list(range(len(front), len(weights)))
    # the runs shrink as the stretch empties, so neither worker is left with a long run at the end
    assert len(runs[0][0]) == MOST_FILES_A_RUN and len(runs[0][-1]) <= 2 and len(runs[1][-1]) <= 2


def test_a_worker_whose_stretch_is_done_helps_with_the_biggest_one_left():
    weights = [1000] * 100
    lanes = Lanes(weights, 4, multiprocessing.get_context("spawn"))
    first, second, third, fourth = (lanes.join() for _ in range(4))
    taken = 0
    while taken < 50:  # the first pair empties its stretch, the first half of the files
        run = lanes.claim(first if taken % 2 else second)
        assert run.stop <= 50
        taken += len(run)
    helped = lanes.claim(first)
    assert helped and helped.start >= 50  # taken from the other stretch
    assert lanes.claim(third).start >= 50 and lanes.claim(fourth).stop == 100


PACKAGE_HELPER = """import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1)
"""
PACKAGE_TRAIN = """import torch
import torch.nn as nn
from .helper import Head


def train_{index}(loader, model):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(Head()(model(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_report_and_cache_file_are_the_same_with_one_worker_or_three(tmp_path, run_cli):
    # results come back from the workers in the order they finish; the report and the cache do not show it
    for folder in ("alpha", "beta", "gamma"):
        write(tmp_path, f"{folder}/__init__.py", "")
        write(tmp_path, f"{folder}/helper.py", PACKAGE_HELPER)
        for index in range(6):
            write(tmp_path, f"{folder}/train_{index}.py", PACKAGE_TRAIN.format(index=index) + "\n" * index)
    outputs, caches = set(), set()
    for jobs in ("1", "3", "2"):
        for cache_file in (tmp_path / CACHE_DIR_NAME).glob("*.json"):
            cache_file.unlink()
        result = run_cli("scan", ".", "--output-format", "json", "--jobs", jobs, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert '"SF410"' in result.stdout  # the helper of another file was consulted
        outputs.add(result.stdout)
        (cache_file,) = (tmp_path / CACHE_DIR_NAME).glob("*.json")
        caches.add(cache_file.read_bytes())
    assert len(outputs) == 1 and len(caches) == 1
