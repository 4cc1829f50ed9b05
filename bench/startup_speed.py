#!/usr/bin/env python
"""How fast does stabfix start, and re-scan an unchanged tree, next to ruff?

    python bench/startup_speed.py [--runs N] [--cold-runs N] [--ruff PATH] [--skip-ruff]

Run it with the Python that has stabfix installed. Every command is started as a fresh process, as a
user, pre-commit or an editor starts it: interpreter start-up and imports are included. The commands
take turns, one run each per round, so that a machine whose speed drifts slows all of them alike; each
is run once before the first round, uncounted (that run also writes the bytecode files an installed
package has). The corpus is bench/scan_speed.py's (496 files, prepared in bench/.cache/corpus/).

Rows: the bare interpreter (`python -c pass`, the floor of any Python tool), `stabfix --version`,
`--help`, `rules`, `explain SF101`; `stabfix scan` of the corpus served from its cache (nothing changed
since the last scan), text and JSON output; `stabfix scan --no-cache` (every file analysed); ruff's
`--version`, `check` with its cache, `check --no-cache`, and `check` with its cache and only the rules
for syntax errors and undefined names (E9, F63, F7, F82: few findings, so printing them costs nothing).

The warm scan's findings must equal the cold scan's (exit status 1 otherwise). Raw times go to
bench/.cache/startup_last_run.json. See bench/README.md, "Startup and warm scan beside ruff".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scan_speed import (  # noqa: E402  (the corpus and the ruff venv are scan_speed's)
    CACHE,
    CORPUS,
    CORPUS_PACKAGES,
    RUFF_VERSION,
    TOOLS_VENV,
    Timed,
    ensure_tools_venv,
    log,
    machine_line,
    prepare_tree,
    python_files,
    timed,
)

RESULTS = CACHE / "startup_last_run.json"
# ruff's rules for syntax errors and undefined names: its time with almost nothing to print
RUFF_FEW_RULES = "E9,F63,F7,F82"


def child_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("CI", None)
    # an installed package has its bytecode: let the uncounted first run write it, as pip would have
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def stabfix(*args: str) -> list[str]:
    return [sys.executable, "-m", "stabfix", *args]


def findings_of(result: Timed) -> list:
    if result.returncode not in (0, 1):
        sys.exit(f"stabfix scan failed with exit {result.returncode}:\n{result.stderr}")
    report = json.loads(result.stdout)
    return [report["findings"], report["errors"]]


def find_ruff(given: str | None, skip: bool) -> tuple[str | None, str]:
    if skip:
        return None, ""
    if given:
        ruff = given
    else:
        installed = ensure_tools_venv(want_torchfix=False, want_ruff=True)["ruff"]
        ruff = str(TOOLS_VENV / "bin" / "ruff") if installed else shutil.which("ruff")
    if ruff is None:
        log("no ruff: its rows are left out")
        return None, ""
    version = subprocess.run([ruff, "--version"], check=False, capture_output=True, text=True).stdout.strip()
    if version != f"ruff {RUFF_VERSION}":
        log(f"note: {version}, not ruff {RUFF_VERSION} as in bench/README.md")
    return ruff, version


def rows_to_run(ruff: str | None, ruff_version: str, scans: bool) -> list[tuple[str, list[str], Path]]:
    # Every command runs in the corpus folder, as in a user's project: `python -m` puts the working folder
    # first on sys.path, so from the repo it would import the repo's stabfix, not the one installed.
    rows = [
        ("python -c pass (interpreter start)", [sys.executable, "-c", "pass"], CORPUS),
        ("stabfix --version", stabfix("--version"), CORPUS),
        ("stabfix --help", stabfix("--help"), CORPUS),
        ("stabfix rules", stabfix("rules"), CORPUS),
        ("stabfix explain SF101", stabfix("explain", "SF101"), CORPUS),
    ]
    if scans:
        rows += [
            ("stabfix scan, warm (cache hit), text", stabfix("scan", "."), CORPUS),
            ("stabfix scan, warm (cache hit), json", stabfix("scan", "--output-format", "json", "."), CORPUS),
        ]
    if ruff is not None:
        rows += [
            (f"{ruff_version} --version", [ruff, "--version"], CORPUS),
            (f"{ruff_version} check, warm (its cache)", [ruff, "check", "--isolated", "--exit-zero", "."], CORPUS),
            (f"{ruff_version} check, warm, --select {RUFF_FEW_RULES}",
             [ruff, "check", "--isolated", "--exit-zero", "--select", RUFF_FEW_RULES, "."], CORPUS),
            (f"{ruff_version} check --no-cache", [ruff, "check", "--isolated", "--exit-zero", "--no-cache", "."], CORPUS),
        ]
        if not scans:
            rows = rows[:-3]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="counted runs of each fast command (default 11)")
    parser.add_argument("--cold-runs", type=int, default=1, help="counted `scan --no-cache` runs (default 1; 0 skips it)")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of the cold scan (default 2)")
    parser.add_argument("--ruff", help="the ruff executable to time (default: bench/scan_speed.py's ruff venv)")
    parser.add_argument("--skip-ruff", action="store_true", help="do not time ruff")
    parser.add_argument("--skip-scan", action="store_true", help="time the start-up rows only (no scan, no cold scan)")
    args = parser.parse_args(argv)

    prepare_tree(CORPUS, CORPUS_PACKAGES)
    files = len(python_files(CORPUS))
    ruff, ruff_version = find_ruff(args.ruff, args.skip_ruff)
    env = child_env()
    rows = rows_to_run(ruff, ruff_version, not args.skip_scan)
    load_before = os.getloadavg()[0]

    if not args.skip_scan:
        log(f"populating the scan cache of {files} files (uncounted)")
        findings_of(timed(stabfix("scan", "--output-format", "json", "."), CORPUS, env))
    for _, command, cwd in rows:
        timed(command, cwd, env)

    times: dict[str, list[Timed]] = {label: [] for label, _, _ in rows}
    for round_number in range(args.runs):
        log(f"round {round_number + 1}/{args.runs}")
        for label, command, cwd in rows:
            times[label].append(timed(command, cwd, env))

    cold_label = f"stabfix scan --no-cache --jobs {args.jobs} (cold)"
    verdict = "not checked (--cold-runs 0)"
    ok = True
    if args.cold_runs > 0 and not args.skip_scan:
        times[cold_label] = []
        for run in range(args.cold_runs):
            log(f"cold scan {run + 1}/{args.cold_runs}")
            times[cold_label].append(
                timed(stabfix("scan", "--no-cache", "--jobs", str(args.jobs), "--output-format", "json", "."), CORPUS, env)
            )
        warm = findings_of(times["stabfix scan, warm (cache hit), json"][-1])
        cold = findings_of(times[cold_label][-1])
        ok = warm == cold
        verdict = f"identical ({len(cold[0])} findings, {len(cold[1])} errors)" if ok else "DIFFERENT"
    load_after = os.getloadavg()[0]

    for label, results in times.items():
        codes = {result.returncode for result in results}
        if not codes <= {0, 1}:
            log(f"warning: {label} exited {sorted(codes)}: {results[-1].stderr.strip()[:300]}")
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {machine_line()}; corpus {files} files; "
          f"1-minute load {load_before:.1f} before, {load_after:.1f} after\n")
    print("| command | runs | wall s median | wall s min-max | cpu s median |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, results in times.items():
        walls = [result.seconds for result in results]
        cpus = [result.cpu for result in results]
        print(f"| {label} | {len(results)} | {statistics.median(walls):.3f} | {min(walls):.3f}-{max(walls):.3f} | "
              f"{statistics.median(cpus):.3f} |")
    print(f"\nwarm scan findings vs cold scan: {verdict}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": machine_line(), "load": [load_before, load_after], "files": files, "warm_vs_cold": verdict,
        "runs": {label: [{"seconds": r.seconds, "cpu": r.cpu, "returncode": r.returncode} for r in results]
                 for label, results in times.items()},
    }, indent=1), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
