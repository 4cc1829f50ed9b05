#!/usr/bin/env python
"""What does name resolution cost? libcst's ScopeProvider / QualifiedNameProvider next to stabfix's model.

    python bench/name_resolution.py [--limit N]

Run it with the Python that has stabfix installed, after `bench/scan_speed.py` has unpacked the
corpus into bench/.cache/corpus/. For every file of the corpus, in one process:
  * parse          - `libcst.parse_module`
  * bare traversal - a batched pass that does nothing (the engine pays it once for all rules)
  * stabfix names  - the model's binding model (`stabfix.model.source.names`), traversal included
  * ScopeProvider  - libcst's scope analysis (every name's assignments and accesses)
  * QualifiedName  - libcst's QualifiedNameProvider (needs the scopes; measured on top of them)
Times are summed over files (CPU time of this process) and printed next to the parse time, so the
ratio is what each would add to a cold scan that parses every file.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, ScopeProvider

from stabfix.model.source.names import build_names

CORPUS = Path(__file__).resolve().parent / ".cache" / "corpus"


def _cpu() -> float:
    return time.process_time()


class _Nothing(cst.BatchableCSTVisitor):
    """A traversal that does nothing: what every batched pass costs before any visitor method runs."""

    def visit_Pass(self, node: cst.Pass) -> None:
        pass


def measure(files: list[Path]) -> dict[str, float]:
    totals = {"parse": 0.0, "bare traversal": 0.0, "stabfix names": 0.0, "ScopeProvider": 0.0, "QualifiedNameProvider": 0.0}
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        start = _cpu()
        try:
            module = cst.parse_module(text)
        except Exception:
            continue
        totals["parse"] += _cpu() - start

        start = _cpu()
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([_Nothing()])
        totals["bare traversal"] += _cpu() - start

        start = _cpu()
        build_names(module)
        totals["stabfix names"] += _cpu() - start

        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        start = _cpu()
        wrapper.resolve(ScopeProvider)
        totals["ScopeProvider"] += _cpu() - start
        start = _cpu()
        wrapper.resolve(QualifiedNameProvider)
        totals["QualifiedNameProvider"] += _cpu() - start
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N files (sorted)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    files = sorted(CORPUS.rglob("*.py"))
    if args.limit:
        files = files[: args.limit]
    if not files:
        print("no corpus: run `python bench/scan_speed.py --skip-torchfix --skip-ruff` once first")
        return 2
    runs = [measure(files) for _ in range(args.runs)]
    parse = statistics.median(run["parse"] for run in runs)
    print(f"{len(files)} files, median of {args.runs} run(s), CPU seconds")
    print(f"{'step':<24}{'seconds':>10}{'x parse':>10}")
    for step in runs[0]:
        seconds = statistics.median(run[step] for run in runs)
        print(f"{step:<24}{seconds:>10.2f}{seconds / parse:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
