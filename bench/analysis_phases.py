#!/usr/bin/env python
"""Where one file's analysis spends its CPU: the bare parse next to the phases of `engine.analyse_text`.

    python bench/analysis_phases.py FILE          # e.g. a file of `bench/big_file.py --write-only DIR`

Run it with the Python that has stabfix installed (or `PYTHONPATH=<tree>` to compare two trees, alternating
runs: single runs on a shared machine move by tenths of a second). It prints the CPU seconds of a bare
`libcst.parse_module` of the file, then of one `analyse_text` with every rule, under the collector thresholds
`stabfix scan` analyses files with, split into its phases: `_gated` (CPython's parse and the rules' gates),
`parse` (libcst's, unvalidated), `_traverse` (the model and the rules: the single walk and the end-of-file
queries) and `_locate` (findings placed, suppressions applied).
"""

from __future__ import annotations

import argparse
import gc
import time

import libcst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    args = parser.parse_args()

    from stabfix import engine
    from stabfix.catalog import load_catalog
    from stabfix.checkers import checker_classes
    from stabfix.scan_runner import _COLLECTOR_THRESHOLDS

    gc.set_threshold(*_COLLECTOR_THRESHOLDS)
    with open(args.file, encoding="utf-8") as handle:
        text = handle.read()
    specs = load_catalog()
    available = checker_classes()
    classes = [available[code] for code in sorted(specs) if code in available]
    spent: dict[str, float] = {}

    def timed(name, function):
        def run(*positional, **keywords):
            start = time.process_time()
            try:
                return function(*positional, **keywords)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - start

        return run

    start = time.process_time()
    libcst.parse_module(text)
    print(f"bare parse {time.process_time() - start:.3f} s")
    for name in ("_gated", "parse", "_traverse", "_locate"):
        setattr(engine, name, timed(name, getattr(engine, name)))
    start = time.process_time()
    findings = engine.analyse_text(text, args.file, classes, specs).findings
    total = time.process_time() - start
    phases = "  ".join(f"{name} {seconds:.3f}" for name, seconds in spent.items())
    print(f"scan {total:.3f} s, {len(findings)} findings: {phases}")


if __name__ == "__main__":
    main()
