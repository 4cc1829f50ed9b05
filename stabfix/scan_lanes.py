"""Which worker of a parallel scan analyses which file: neighbours in path order go to one worker.

A file's analysis builds models of the other files it imports from (stabfix.project), and each worker keeps
the ones it built for its later files. Files of one folder ask about the same few files (a package's
layers, its base model), so a worker that gets a run of neighbouring files builds each of those once; two
workers taking turns with the files of one folder both build them (on the bench corpus a third of the
models were built twice, bench/README.md "affinity (session 25)").

The files, in the order given (path order), are cut into stretches of about equal size, one per pair of
workers; one worker of a pair takes runs of files from the front of its stretch, the other from the back,
so the pair meets wherever the work of the stretch is half done, and the two share only the files around
that point. A worker whose stretch is done takes from the stretch with the most left. A run is a share of
what its stretch has left (at most 16 files), so the runs shrink towards the end and the workers finish
together.

Only which process analyses a file depends on this (and on timing): a file's result never does, so the
output is the same whatever the job count (tests/test_scan_lanes.py).
"""

from __future__ import annotations

import os
from itertools import accumulate
from typing import Sequence

MOST_FILES_A_RUN = 16
RUNS_A_STRETCH_LEFT = 8  # a run takes this share of what its stretch has left (two ends: 4 runs each)
FILE_OVERHEAD = 2048  # a file costs some analysis whatever its size: an empty `__init__.py` counts as this many bytes


def file_weights(paths: Sequence[str]) -> list[int]:
    """Each file's size (what its analysis costs grows with it), plus the cost every file has."""
    weights = []
    for path in paths:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0  # its worker reports why it cannot be read
        weights.append(size + FILE_OVERHEAD)
    return weights


class Lanes:
    """The shared plan of a run: the stretches' two ends, moved by each worker under one lock. Made in the
    parent before the workers start (they get it through fork, or pickled as a worker's start argument)."""

    def __init__(self, weights: Sequence[int], workers: int, context) -> None:
        self._before = [0, *accumulate(weights)]  # the weight of the files before each index
        cuts = _cuts(self._before, workers)
        self._ends = context.Array("q", [end for start, stop in zip(cuts, cuts[1:]) for end in (start, stop)])
        self._joined = context.Value("i", 0)

    def join(self) -> int:
        """A new worker's lane: lane 2k works stretch k from its front, lane 2k+1 from its back."""
        with self._joined.get_lock():
            lane = self._joined.value
            self._joined.value += 1
        return lane

    def claim(self, lane: int) -> range:
        """The indices of the next run of files for `lane` (ascending); empty when every file is taken."""
        with self._ends.get_lock():
            ends = self._ends.get_obj()
            stretch = lane // 2
            if stretch >= len(ends) // 2 or ends[2 * stretch] >= ends[2 * stretch + 1]:
                stretch = max(range(len(ends) // 2), key=lambda k: self._weight(ends[2 * k], ends[2 * k + 1]))
            front, back = ends[2 * stretch], ends[2 * stretch + 1]
            if front >= back:
                return range(0)
            budget = self._weight(front, back) // RUNS_A_STRETCH_LEFT
            if lane % 2 == 0:
                stop = front + 1
                while stop < back and stop - front < MOST_FILES_A_RUN and self._weight(front, stop + 1) <= budget:
                    stop += 1
                ends[2 * stretch] = stop
                return range(front, stop)
            start = back - 1
            while start > front and back - start < MOST_FILES_A_RUN and self._weight(start - 1, back) <= budget:
                start -= 1
            ends[2 * stretch + 1] = start
            return range(start, back)

    def _weight(self, start: int, stop: int) -> int:
        return self._before[stop] - self._before[start]


def _cuts(before: Sequence[int], workers: int) -> list[int]:
    """The indices where stretches start (and the end): a stretch per pair of workers (an odd worker out
    gets one of its own), each of a weight in proportion to its workers."""
    pairs, alone = divmod(workers, 2)
    shares = [2] * pairs + [1] * alone
    total, files = before[-1], len(before) - 1
    cuts, index, workers_before = [0], 0, 0
    for share in shares[:-1]:
        workers_before += share
        while index < files and before[index] * workers < total * workers_before:
            index += 1
        cuts.append(index)
    cuts.append(files)
    return cuts
