"""A pytest plugin: per test and phase, wall seconds, CPU seconds of the test process and CPU seconds of the
child processes it waited for (subprocess.run...), appended to $CPULOG by each xdist worker. On a shared
machine CPU seconds compare runs that wall seconds cannot (the section "CI time" of bench/README.md).

    CPULOG=/tmp/cpu.tsv PYTHONPATH=$PWD:$PWD/bench python -m pytest -n 2 -p pytest_cpu_log
    python bench/pytest_cpu_table.py /tmp/cpu.tsv 40
"""
import os
import resource
import time

import pytest

_out = None


def _cpu():
    self_ = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_, kids.ru_utime + kids.ru_stime


def _log(item, when, wall, cpu, kids):
    global _out
    if _out is None:
        _out = open(os.environ.get("CPULOG", "pytest-cpu.tsv"), "a", buffering=1)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _out.write(f"{item.nodeid}\t{when}\t{wall:.3f}\t{cpu:.3f}\t{kids:.3f}\t{worker}\t{time.time():.1f}\n")


def _wrap(when):
    @pytest.hookimpl(hookwrapper=True)
    def hook(item, *args, **kwargs):
        w0, (c0, k0) = time.perf_counter(), _cpu()
        yield
        w1, (c1, k1) = time.perf_counter(), _cpu()
        _log(item, when, w1 - w0, c1 - c0, k1 - k0)
    return hook


pytest_runtest_setup = _wrap("setup")
pytest_runtest_call = _wrap("call")
pytest_runtest_teardown = _wrap("teardown")
