#!/usr/bin/env python
"""Rescan public PyTorch training code with stabfix: every finding to judge for false positives, and any crash.

    python bench/real_code.py                  # all rules, three corpora
    python bench/real_code.py --select SF402   # only these rules (passed on to `stabfix scan --select`)
    python bench/real_code.py --jobs 1         # one worker, on a machine shared with others

Run it with the Python that has stabfix installed (the repo's .venv) after every rule change. It
downloads, over pip only (`pip download --no-deps --only-binary=:all:`, via scan_speed.py's helpers),
33 pinned pure-Python wheels of libraries full of training, fine-tuning and evaluation code (trainers,
loops, RL agents, examples) and unzips them once into bench/.cache/real/<name>-<version>/ (gitignored),
next to an empty stabfix.yaml so no config of the repo applies. Then it runs
`stabfix scan --no-cache --output-format json .` on that corpus, on scan_speed.py's benchmark corpus
(bench/.cache/corpus) and on its crash corpus (bench/.cache/crash, transformers), preparing them when
absent, and prints per corpus: files, lines, seconds, findings per rule, files with errors (syntax
errors vs "internal error" crashes, with tracebacks of the crashes), then every finding as
`path:line:col CODE message`. The full reports go to bench/.cache/real_last.json.

Exit status: 0 when no file crashed stabfix, 1 when any "internal error" occurred.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import scan_speed  # noqa: E402 - the wheel download, unpack, scan and crash helpers live there

REAL = scan_speed.CACHE / "real"
RESULTS = scan_speed.CACHE / "real_last.json"

# Real PyTorch training code with a pure-Python wheel. Left out on purpose: timm, accelerate,
# segmentation-models-pytorch, torchdiffeq (the bench corpus) and transformers (the crash corpus),
# scanned here separately; deepspeed (no wheel), torchrl (only CPython-specific wheels), torchgeo 0.10.1
# (not served) and u8darts (an empty shim of darts).
REAL_PACKAGES = [
    ("peft", "0.21.2"),
    ("trl", "1.16.0"),
    ("diffusers", "0.42.1"),
    ("pytorch-lightning", "2.6.6"),
    ("pytorch-ignite", "0.5.5"),
    ("skorch", "1.4.0"),
    ("avalanche-lib", "0.6.0"),
    ("pyro-ppl", "1.9.2"),
    ("stable-baselines3", "2.9.2"),
    ("tianshou", "2.0.1"),
    ("pytorch-forecasting", "1.8.0"),
    ("darts", "0.48.1"),
    ("gpytorch", "1.15.2"),
    ("botorch", "0.18.1"),
    ("pytorch-tabnet", "4.1.0"),
    ("flair", "0.15.1"),
    ("speechbrain", "1.1.2"),
    ("sentence-transformers", "6.2.0"),
    ("open-clip-torch", "3.3.0"),
    ("kornia", "0.9.0"),
    ("monai", "1.6.1"),
    ("lightly", "1.6.0"),
    ("opacus", "1.6.0"),
    ("captum", "0.9.0"),
    ("torchmetrics", "1.9.0"),
    ("pytorch-metric-learning", "2.9.0"),
    ("torch-geometric", "2.8.1"),
    ("mosaicml", "0.32.1"),
    ("torchtune", "0.6.1"),
    ("ultralytics", "8.4.190"),
    ("fastai", "2.8.12"),
    ("poutyne", "1.19.0"),
    ("d2l", "1.0.3"),
]

CORPORA = [
    ("real", REAL, REAL_PACKAGES),
    ("bench", scan_speed.CORPUS, scan_speed.CORPUS_PACKAGES),
    ("crash", scan_speed.CRASH_CORPUS, scan_speed.CRASH_PACKAGES),
]


def prepare(parent: Path, packages: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """Unpack the corpus once (idempotent); returns {package folder: (files, lines)}."""
    sizes = {}
    for root in scan_speed.prepare_tree(parent, packages):
        wheel = (root / ".unpacked").read_text(encoding="utf-8").strip()
        if not wheel.endswith("-none-any.whl"):
            sys.exit(f"{wheel} is not a pure-Python wheel; pin a version that has one")
        files = scan_speed.python_files(root)
        sizes[root.name] = (len(files), scan_speed.count_lines(files))
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", help="rules to run, passed to `stabfix scan --select` (default: all)")
    parser.add_argument("--only", choices=[name for name, _, _ in CORPORA], action="append",
                        help="scan only this corpus (repeatable; default: all three)")
    parser.add_argument("--jobs", type=int, help="passed to `stabfix scan --jobs` (default: stabfix's own, all cores)")
    args = parser.parse_args(argv)
    try:
        import stabfix
    except ImportError as exc:
        sys.exit(f"run this with the Python that has stabfix installed ({exc})")
    scan_args = (["--no-cache"] + (["--select", args.select] if args.select else [])
                 + (["--jobs", str(args.jobs)] if args.jobs else []))

    started = _dt.datetime.now().astimezone()
    print(f"stabfix {stabfix.__version__}; {scan_speed.machine_line()}; {started:%Y-%m-%d %H:%M %Z}; "
          f"rules: {args.select or 'all'}")
    results: dict[str, dict] = {}
    crashes_total = 0
    all_findings: list[tuple[str, dict]] = []
    for name, parent, packages in CORPORA:
        if args.only and name not in args.only:
            continue
        sizes = prepare(parent, packages)
        files = sum(f for f, _ in sizes.values())
        lines = sum(n for _, n in sizes.values())
        scan_speed.log(f"scanning the {name} corpus: {files} files")
        run = scan_speed.run_stabfix(parent, scan_args, 0)
        report, seconds = run.report, run.timed.seconds
        crashes, syntax, other = scan_speed.classify(report["errors"])
        by_code = report["summary"].get("by_code", {})
        print(f"\n== {name} corpus ({parent.relative_to(BENCH.parent)}): {len(sizes)} packages, {files} .py files, "
              f"{lines:,} lines; {report['summary']['files_scanned']} files scanned in {seconds:.1f} s wall, "
              f"{run.timed.cpu:.1f} s CPU")
        if name == "real":
            for package, (count, package_lines) in sizes.items():
                print(f"   {package:<34} {count:>5} files {package_lines:>8,} lines")
        print(f"   findings: {report['summary']['findings']}"
              + (f" ({', '.join(f'{code}: {n}' for code, n in by_code.items())})" if by_code else ""))
        print(f"   files with errors: {len(crashes) + len(syntax) + len(other)} "
              f"(syntax errors: {len(syntax)}, internal errors: {len(crashes)}, other: {len(other)})")
        for label, items in (("INTERNAL", crashes), ("syntax", syntax), ("other", other)):
            for error in items:
                print(f"   {label}: {error['path']}: {error['message'][:200]}")
        if crashes:
            print(scan_speed.crash_tracebacks(parent, crashes))
        crashes_total += len(crashes)
        all_findings += [(name, finding) for finding in report["findings"]]
        results[name] = {"root": str(parent), "packages": {k: {"files": f, "lines": n} for k, (f, n) in sizes.items()},
                         "files": files, "lines": lines, "seconds": seconds, "cpu_s": run.timed.cpu,
                         "report": report}

    per_code = Counter((finding["code"], name) for name, finding in all_findings)
    print("\nfindings per rule and corpus:")
    for code in sorted({code for code, _ in per_code}):
        print(f"   {code}: " + ", ".join(f"{name} {per_code[code, name]}" for name in results))
    print(f"\nall findings ({len(all_findings)}), paths relative to bench/.cache/<corpus folder>:")
    for name, finding in all_findings:
        message = " ".join(finding["message"].split())[:100]
        print(f"   [{name}] {finding['path']}:{finding['line']}:{finding['column']} {finding['code']} {message}")
    print(f"\ninternal errors: {crashes_total}")

    RESULTS.write_text(json.dumps({"date": started.isoformat(timespec="seconds"), "machine": scan_speed.machine_line(),
                                   "stabfix": stabfix.__version__, "select": args.select, "corpora": results},
                                  indent=2) + "\n", encoding="utf-8")
    scan_speed.log(f"full reports written to {RESULTS}")
    return 1 if crashes_total else 0


if __name__ == "__main__":
    sys.exit(main())
