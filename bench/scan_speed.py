#!/usr/bin/env python
"""How fast is `stabfix scan`, next to bare libcst parsing, TorchFix and ruff? Plus a crash and a determinism check.

    python bench/scan_speed.py [--runs N] [--skip-torchfix] [--skip-ruff] [--skip-crash-check]

Run it with the Python that has stabfix installed (the repo's .venv). Everything it downloads or
builds lives in bench/.cache/ (gitignored): pinned wheels, the unzipped corpus, and a separate venv
for TorchFix and ruff (TorchFix pins an older libcst, so it cannot share stabfix's environment).

What it measures, all on the same list of files in the same run (see bench/README.md):
  * bare parse   - `libcst.parse_module` of every file, serially, in a fresh subprocess (wall clock,
                   interpreter start and `import libcst` included; the parse-only time is printed too)
  * stabfix cold - `stabfix scan --no-cache` (default jobs = all cores, and `--jobs 1`)
  * stabfix warm - `stabfix scan` re-run on the unchanged corpus after one populating run
  * TorchFix 0.7.0 once (minutes), and ruff as a speed reference
Then: stabfix must report identical findings whatever PYTHONHASHSEED, --jobs or cache state, and
must not crash (no "internal error") on any file of transformers 4.44.2.

Exit status: 0 when the determinism and crash checks pass, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
WHEELS = CACHE / "wheels"
CORPUS = CACHE / "corpus"
CRASH_CORPUS = CACHE / "crash"
TOOLS_VENV = CACHE / "venv-torchfix"
RESULTS = CACHE / "last_run.json"

# The benchmark corpus: timm + accelerate + two small training-code packages, 496 files together.
CORPUS_PACKAGES = [
    ("timm", "1.0.31"),
    ("accelerate", "1.15.0"),
    ("segmentation-models-pytorch", "0.6.0"),
    ("torchdiffeq", "0.2.5"),
]
CRASH_PACKAGES = [("transformers", "4.44.2")]
TORCHFIX_VERSION = "0.7.0"
RUFF_VERSION = "0.17.6"
# The CPU build that lies on this machine; a constraint so nothing in the tools venv drags in CUDA torch.
TORCH_PIN = "torch==2.13.0"

INTERNAL_ERROR = "internal error"
SYNTAX_ERROR = "syntax error"

BARE_PARSE_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import libcst
t1 = time.perf_counter()
paths = open(sys.argv[1], encoding="utf-8").read().splitlines()
failed = []
for path in paths:
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw
    try:
        libcst.parse_module(text)
    except Exception as exc:  # noqa: BLE001 - a parse failure is a result, not a crash
        failed.append([path, f"{exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"])
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "parse_s": t2 - t1, "files": len(paths), "failed": failed}))
"""

TORCHFIX_LINE = re.compile(r"^\S+?\.py:\d+:\d+: ?(TOR\d+)")


# --------------------------------------------------------------------------------------------- setup


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def wheel_path(name: str, version: str) -> Path | None:
    prefix = f"{name.replace('-', '_').lower()}-{version}-"
    for candidate in sorted(WHEELS.glob("*.whl")):
        if candidate.name.lower().startswith(prefix):
            return candidate
    return None


def fetch_wheel(name: str, version: str) -> Path:
    found = wheel_path(name, version)
    if found is not None:
        return found
    WHEELS.mkdir(parents=True, exist_ok=True)
    log(f"downloading {name}=={version}")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
         "--disable-pip-version-check", "-d", str(WHEELS), f"{name}=={version}"],
        check=False, capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"pip download of {name}=={version} failed:\n{done.stdout}{done.stderr}")
    found = wheel_path(name, version)
    if found is None:
        sys.exit(f"pip download of {name}=={version} produced no wheel in {WHEELS}")
    return found


def unpack(name: str, version: str, parent: Path) -> Path:
    """Unzip a pinned wheel into parent/<name>-<version>/ once (a marker file records completion)."""
    target = parent / f"{name}-{version}"
    marker = target / ".unpacked"
    if marker.exists():
        return target
    wheel = fetch_wheel(name, version)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    marker.write_text(wheel.name + "\n", encoding="utf-8")
    return target


def prepare_tree(parent: Path, packages: list[tuple[str, str]]) -> list[Path]:
    """A folder of unpacked packages with its own empty stabfix.yaml, so that no config of the repo
    applies and the scan cache lands in parent/.stabfix_cache/."""
    parent.mkdir(parents=True, exist_ok=True)
    (parent / "stabfix.yaml").write_text("{}\n", encoding="utf-8")
    return [unpack(name, version, parent) for name, version in packages]


def python_files(parent: Path) -> list[Path]:
    return sorted(p for p in parent.rglob("*.py") if ".stabfix_cache" not in p.parts and p.is_file())


def count_lines(files: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


def tools_python() -> Path:
    return TOOLS_VENV / "bin" / "python"


def ensure_tools_venv(want_torchfix: bool, want_ruff: bool) -> dict[str, str | None]:
    """TorchFix (and ruff) in their own venv. Returns the versions installed (None: unavailable)."""
    versions: dict[str, str | None] = {"torchfix": None, "ruff": None}
    if not (want_torchfix or want_ruff):
        return versions
    if not tools_python().exists():
        log(f"creating {TOOLS_VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(TOOLS_VENV)], check=True)
    constraints = CACHE / "tools-constraints.txt"
    constraints.write_text(TORCH_PIN + "\n", encoding="utf-8")
    pip = [str(tools_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", str(constraints)]

    def installed(dist: str) -> str | None:
        probe = subprocess.run(
            [str(tools_python()), "-c", f"import importlib.metadata as m; print(m.version('{dist}'))"],
            check=False, capture_output=True, text=True,
        )
        return probe.stdout.strip() if probe.returncode == 0 else None

    if want_torchfix:
        if installed("torchfix") != TORCHFIX_VERSION:
            # TorchFix 0.7.0 itself does not require torch; the constraint only guarantees that if anything
            # ever pulls torch into this venv it is the local CPU wheel, not a multi-GB CUDA build.
            log(f"installing torchfix=={TORCHFIX_VERSION} into {TOOLS_VENV}")
            result = subprocess.run([*pip, f"torchfix=={TORCHFIX_VERSION}"], check=False)
            if result.returncode != 0:
                log("torchfix install failed; TorchFix is left out")
        versions["torchfix"] = installed("torchfix")
    if want_ruff:
        if installed("ruff") != RUFF_VERSION:
            log(f"installing ruff=={RUFF_VERSION} into {TOOLS_VENV}")
            result = subprocess.run([*pip, f"ruff=={RUFF_VERSION}"], check=False)
            if result.returncode != 0:
                log("ruff install failed; ruff is left out")
        versions["ruff"] = installed("ruff")
    return versions


# ------------------------------------------------------------------------------------------- running


@dataclass
class Timed:
    seconds: float
    cpu: float  # user + system CPU seconds of the command and every process it waited for
    stdout: str
    stderr: str
    returncode: int


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(seconds, cpu, done.stdout, done.stderr, done.returncode)


def stabfix_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "stabfix", "scan", *args]


def source_fingerprint() -> str:
    """A hash of stabfix's code and rule catalog, to notice edits made while the benchmark runs."""
    import stabfix

    digest = hashlib.blake2b(digest_size=12)
    roots = [Path(stabfix.__file__).resolve().parent, BENCH.parent / "rules"]
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".yaml", ".yml") and "__pycache__" not in path.parts:
                digest.update(str(path).encode() + b"\0")
                try:
                    digest.update(path.read_bytes())
                except OSError:
                    pass
    return digest.hexdigest()


@dataclass
class StabfixRun:
    timed: Timed
    report: dict
    fingerprint: str | None  # None: the source changed while this run was going on
    label: str = ""


def run_stabfix(cwd: Path, args: list[str], seed: int) -> StabfixRun:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    env.pop("CI", None)
    before = source_fingerprint()
    result = timed(stabfix_command(*args, "--output-format", "json", "."), cwd, env)
    after = source_fingerprint()
    if result.returncode not in (0, 1):
        sys.exit(f"stabfix scan {' '.join(args)} failed with exit {result.returncode}:\n{result.stderr}")
    try:
        report = json.loads(result.stdout)
    except ValueError:
        sys.exit(f"stabfix scan {' '.join(args)} printed no JSON report:\n{result.stdout[:2000]}\n{result.stderr}")
    return StabfixRun(result, report, before if before == after else None)


@dataclass
class Row:
    tool: str
    times: list[float]  # wall-clock seconds, one per run
    cpus: list[float]  # CPU seconds (user + system, all processes), one per run; empty when unknown
    findings: str = ""
    note: str = ""
    files: int = 0

    @property
    def seconds(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpus) if self.cpus else None


@dataclass
class Bench:
    rows: list[Row] = field(default_factory=list)
    reports: dict[str, dict] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    determinism_compared: int = 0
    determinism_total: int = 0


def timed_row(tool: str, results: list[Timed], findings: str, note: str, files: int) -> Row:
    return Row(tool, [r.seconds for r in results], [r.cpu for r in results], findings, note, files)


def findings_of(report: dict) -> list:
    return report["findings"]


def summary_counts(report: dict) -> str:
    summary = report["summary"]
    by_code = ", ".join(f"{code}: {count}" for code, count in summary.get("by_code", {}).items())
    text = f"{summary['findings']} findings"
    if by_code:
        text += f" ({by_code})"
    return text + f", {summary['errors']} errors"


def bench_bare_parse(files: list[Path], runs: int) -> tuple[Row, Row, list]:
    listing = CACHE / "corpus-files.txt"
    listing.write_text("".join(f"{path}\n" for path in files), encoding="utf-8")
    walls: list[float] = []
    cpus: list[float] = []
    parses: list[float] = []
    failed: list = []
    for index in range(runs):
        result = timed([sys.executable, "-c", BARE_PARSE_SCRIPT, str(listing)], CACHE)
        if result.returncode != 0:
            sys.exit(f"bare parse subprocess failed:\n{result.stderr}")
        data = json.loads(result.stdout)
        walls.append(result.seconds)
        cpus.append(result.cpu)
        parses.append(data["parse_s"])
        failed = data["failed"]
        log(f"bare parse run {index + 1}/{runs}: {result.seconds:.2f}s wall, {data['parse_s']:.2f}s parsing")
    note = f"{len(failed)} files failed to parse" if failed else "all files parsed"
    wall = Row("bare libcst.parse_module, serial (process)", walls, cpus, "-", note, len(files))
    inner = Row("bare libcst.parse_module, parse loop only", parses, [], "-", "no start-up, no import", len(files))
    return wall, inner, failed


def compare_findings(label_a: str, a: dict, label_b: str, b: dict) -> str | None:
    if findings_of(a) == findings_of(b) and a["errors"] == b["errors"]:
        return None
    fa = {json.dumps(item, sort_keys=True) for item in findings_of(a)}
    fb = {json.dumps(item, sort_keys=True) for item in findings_of(b)}
    detail = f"{label_a}: {len(findings_of(a))} findings, {label_b}: {len(findings_of(b))} findings"
    only_a, only_b = sorted(fa - fb)[:3], sorted(fb - fa)[:3]
    if only_a:
        detail += f"\n    only in {label_a}: " + "\n      ".join(only_a)
    if only_b:
        detail += f"\n    only in {label_b}: " + "\n      ".join(only_b)
    if not only_a and not only_b:
        detail += " (same set, different order or different errors)"
    return detail


def bench_stabfix(bench: Bench, files: list[Path], runs: int, jobs_parallel: int) -> list[str]:
    """Cold (parallel and --jobs 1) and warm timings; returns determinism problems (empty: OK).

    Every run gets its own PYTHONHASHSEED (1, 2, 3, ...); all of their findings must be identical.
    """
    runs_done: list[StabfixRun] = []
    seed = 0

    def one(label: str, args: list[str]) -> StabfixRun:
        nonlocal seed
        seed += 1
        run = run_stabfix(CORPUS, args, seed)
        run.label = f"{label} PYTHONHASHSEED={seed}"
        runs_done.append(run)
        return run

    cold_parallel: list[Timed] = []
    cold_serial: list[Timed] = []
    for index in range(runs):
        # Alternate so that a burst of outside load does not hit only one of the two variants.
        serial = one("cold --jobs 1", ["--no-cache", "--jobs", "1"])
        cold_serial.append(serial.timed)
        log(f"stabfix cold (--jobs 1) run {index + 1}/{runs}: {serial.timed.seconds:.2f}s")
        parallel = one(f"cold --jobs {jobs_parallel}", ["--no-cache", "--jobs", str(jobs_parallel)])
        cold_parallel.append(parallel.timed)
        log(f"stabfix cold (--jobs {jobs_parallel}) run {index + 1}/{runs}: {parallel.timed.seconds:.2f}s")
    bench.reports["stabfix cold"] = runs_done[0].report

    shutil.rmtree(CORPUS / ".stabfix_cache", ignore_errors=True)
    populate = one("cache-populating run", [])
    log(f"stabfix populating run: {populate.timed.seconds:.2f}s")
    warm: list[Timed] = []
    for index in range(runs):
        result = one("warm", [])
        warm.append(result.timed)
        log(f"stabfix warm run {index + 1}/{runs}: {result.timed.seconds:.2f}s")

    reference = runs_done[0]
    files_seen = reference.report["summary"]["files_scanned"]
    if files_seen != len(files):
        log(f"warning: stabfix scanned {files_seen} files, the corpus has {len(files)}")
    counts = summary_counts(reference.report)
    bench.rows.append(timed_row(f"stabfix cold (--no-cache, --jobs {jobs_parallel})", cold_parallel, counts, "", files_seen))
    bench.rows.append(timed_row("stabfix cold (--no-cache, --jobs 1)", cold_serial, counts, "", files_seen))
    bench.rows.append(timed_row("stabfix warm (cache hit, unchanged files)", warm, summary_counts(runs_done[-1].report),
                                f"populating run {populate.timed.seconds:.2f}s", files_seen))

    # The repo may be edited while this runs: compare only runs made with the same stabfix source.
    fingerprints = [run.fingerprint for run in runs_done]
    if len(set(fingerprints)) > 1:
        bench.warnings.append(
            f"stabfix's source (package or rules) changed during the benchmark: {len(set(fingerprints))} different "
            "versions ran, so the timings mix versions and the warm runs may have missed the cache; run again"
        )
    problems = []
    groups: dict[str | None, list[StabfixRun]] = {}
    for run in runs_done:
        groups.setdefault(run.fingerprint, []).append(run)
    compared = 0
    for fingerprint, group in groups.items():
        if fingerprint is None or len(group) < 2:
            continue  # the source changed during these runs, or nothing to compare with
        compared += len(group)
        for other in group[1:]:
            problem = compare_findings(group[0].label, group[0].report, other.label, other.report)
            if problem:
                problems.append(problem)
    bench.determinism_compared = compared
    bench.determinism_total = len(runs_done)
    return problems


def bench_torchfix(bench: Bench, files: list[Path]) -> None:
    torchfix = TOOLS_VENV / "bin" / "torchfix"
    log("TorchFix: one run (takes minutes)")
    result = timed([str(torchfix), "."], CORPUS)
    codes: dict[str, int] = {}
    for line in result.stdout.splitlines():
        match = TORCHFIX_LINE.match(line)
        if match:
            codes[match.group(1)] = codes.get(match.group(1), 0) + 1
    checked = re.search(r"Finished checking (\d+) files", result.stderr)
    total = sum(codes.values())
    detail = ", ".join(f"{code}: {count}" for code, count in sorted(codes.items()))
    note = f"checked {checked.group(1)} files containing 'torch'" if checked else f"exit {result.returncode}"
    log(f"TorchFix: {result.seconds:.1f}s, {total} findings")
    bench.rows.append(timed_row(f"TorchFix {TORCHFIX_VERSION} (1 run, default jobs)", [result],
                          f"{total} findings ({detail})" if detail else f"{total} findings", note, len(files)))


def bench_ruff(bench: Bench, files: list[Path], runs: int, version: str) -> None:
    ruff = TOOLS_VENV / "bin" / "ruff"
    results: list[Timed] = []
    count = 0
    for _ in range(runs):
        result = timed([str(ruff), "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "json", "."], CORPUS)
        results.append(result)
        count = len(json.loads(result.stdout or "[]"))
    log(f"ruff: median {statistics.median(r.seconds for r in results):.2f}s")
    bench.rows.append(timed_row(f"ruff {version} check (default rules, --no-cache)", results, f"{count} findings",
                          "speed reference only, different rules", len(files)))


# -------------------------------------------------------------------------------------------- checks


def crash_check() -> tuple[int, int, list[dict], dict]:
    """stabfix over every file of transformers; returns (files on disk, files scanned, errors, report)."""
    roots = prepare_tree(CRASH_CORPUS, CRASH_PACKAGES)
    files = python_files(CRASH_CORPUS)
    log(f"crash check: stabfix over {len(files)} files of {', '.join(r.name for r in roots)}")
    run = run_stabfix(CRASH_CORPUS, ["--no-cache"], 0)
    return len(files), run.report["summary"]["files_scanned"], run.report["errors"], run.report


TRACEBACK_SCRIPT = r"""
import sys, traceback
from stabfix.catalog import load_catalog
from stabfix.scan_runner import Task, _process
codes = tuple(sorted(load_catalog()))
for path in sys.argv[1:]:
    try:
        _process(Task(path, path, codes, "scan", False))
        print(f"--- {path}: no exception when re-run in-process now (fixed meanwhile, or needs other rules)")
    except Exception:
        print(f"--- {path}")
        traceback.print_exc(file=sys.stdout)
"""


def crash_tracebacks(cwd: Path, crashes: list[dict], per_message: int = 2) -> str:
    """Re-run a few crashing files in-process (all rules) to get the tracebacks stabfix's report leaves out."""
    chosen: list[str] = []
    seen: dict[str, int] = {}
    for crash in crashes:
        if seen.get(crash["message"], 0) < per_message:
            seen[crash["message"]] = seen.get(crash["message"], 0) + 1
            chosen.append(crash["path"])
    if not chosen:
        return ""
    try:
        done = subprocess.run([sys.executable, "-c", TRACEBACK_SCRIPT, *chosen], check=False, cwd=cwd,
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "(re-running the crashing files timed out)"
    return (done.stdout + done.stderr).rstrip()


def classify(errors: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    crashes = [e for e in errors if INTERNAL_ERROR in e["message"]]
    syntax = [e for e in errors if SYNTAX_ERROR in e["message"] and e not in crashes]
    other = [e for e in errors if e not in crashes and e not in syntax]
    return crashes, syntax, other


# ------------------------------------------------------------------------------------------- reports


def print_table(rows: list[Row], bare: Row, cold: Row) -> str:
    header = ["tool", "seconds", "files/s", "x bare parse", "x stabfix cold", "cpu s"]
    body = []
    for row in rows:
        body.append([
            row.tool,
            f"{row.seconds:.2f}",
            f"{row.files / row.seconds:.0f}" if row.seconds > 0 else "-",
            f"{row.seconds / bare.seconds:.2f}",
            f"{row.seconds / cold.seconds:.2f}",
            f"{row.cpu:.2f}" if row.cpu is not None else "-",
        ])
    widths = [max(len(header[i]), *(len(line[i]) for line in body)) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(cells)
        ) + " |"

    lines = [fmt(header), "|" + "|".join(("-" * (w + 1) + ":") if i else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"]
    lines += [fmt(line) for line in body]
    return "\n".join(lines)


def machine_line() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return f"{cores} cores ({cpu or 'unknown CPU'}), {platform.system()} {platform.release()}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per measurement, median reported (default 3)")
    parser.add_argument("--skip-torchfix", action="store_true", help="do not install or run TorchFix (saves minutes)")
    parser.add_argument("--skip-ruff", action="store_true", help="do not install or run ruff")
    parser.add_argument("--skip-crash-check", action="store_true", help="do not scan transformers for crashes")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)

    try:
        import libcst  # noqa: F401

        import stabfix
    except ImportError as exc:
        sys.exit(f"run this with the Python that has stabfix installed ({exc})")
    from stabfix.scan_runner import default_jobs

    started = _dt.datetime.now().astimezone()
    roots = prepare_tree(CORPUS, CORPUS_PACKAGES)
    files = python_files(CORPUS)
    per_package = {root.name: python_files(root) for root in roots}
    total_lines = count_lines(files)
    versions = ensure_tools_venv(not args.skip_torchfix, not args.skip_ruff)

    try:
        from stabfix.catalog import load_catalog

        rules = sorted(load_catalog())
    except Exception as exc:  # noqa: BLE001 - the catalog is being edited; the benchmark still runs
        rules = [f"(catalog did not load: {exc})"]
    print(f"stabfix {stabfix.__version__}, libcst {importlib.metadata.version('libcst')}; "
          f"{machine_line()}; {started:%Y-%m-%d %H:%M %Z}")
    print(f"rules: {', '.join(rules)}")
    print(f"corpus: {len(files)} files, {total_lines} lines (newline count) in {CORPUS}")
    for name, package_files in per_package.items():
        print(f"  {name:<40} {len(package_files):>4} files {count_lines(package_files):>7} lines")
    load_start = os.getloadavg()
    print(f"runs per measurement: {runs} (median); 1-min load average at start: {load_start[0]:.2f}\n", flush=True)

    bench = Bench()
    bare, bare_inner, parse_failures = bench_bare_parse(files, runs)
    bench.rows += [bare, bare_inner]
    jobs_parallel = max(2, default_jobs())
    problems = bench_stabfix(bench, files, runs, jobs_parallel)
    if versions["ruff"]:
        bench_ruff(bench, files, runs, versions["ruff"])
    if versions["torchfix"]:
        bench_torchfix(bench, files)

    cold = next(row for row in bench.rows if row.tool.startswith("stabfix cold"))
    table = print_table(bench.rows, bare, cold)
    load_end = os.getloadavg()
    print(table)
    print("seconds: median wall clock; x ...: seconds / that row's seconds (below 1 = faster); cpu s: median "
          "user+system CPU of all processes of the run")
    print(f"1-min load average at start {load_start[0]:.2f}, after timing {load_end[0]:.2f} "
          f"(anything else running on the {os.cpu_count()} cores inflates the wall-clock figures)")
    print()
    print("findings per tool:")
    for row in bench.rows:
        print(f"  {row.tool}: {row.findings}" + (f"  [{row.note}]" if row.note else ""))
    for path, message in parse_failures:
        print(f"  bare parse failure: {path}: {message}")
    corpus_errors = bench.reports["stabfix cold"]["errors"]
    for error in corpus_errors:
        print(f"  stabfix error on corpus: {error['path']}: {error['message']}")

    print()
    compared = f"{bench.determinism_compared} of {bench.determinism_total} runs compared"
    if bench.determinism_compared < bench.determinism_total:
        compared += " (the others ran while stabfix's source was being edited)"
    variants = f"PYTHONHASHSEED=1..{bench.determinism_total}, --jobs 1 vs --jobs {jobs_parallel}, cold vs cache"
    if problems:
        print(f"determinism ({variants}): MISMATCH; {compared}")
    elif bench.determinism_compared == 0:
        print(f"determinism ({variants}): NOT CHECKED; {compared}")
        for problem in problems:
            print(f"  {problem}")
    else:
        print(f"determinism ({variants}): OK; {compared}, "
              f"{len(findings_of(bench.reports['stabfix cold']))} identical findings in each")
    for warning in bench.warnings:
        print(f"warning: {warning}")

    corpus_crashes = [e for e in corpus_errors if INTERNAL_ERROR in e["message"]]
    crashes_total = len(corpus_crashes)
    crash_summary: dict = {}
    tracebacks = []
    if corpus_crashes:
        tracebacks.append(crash_tracebacks(CORPUS, corpus_crashes))
    if not args.skip_crash_check:
        on_disk, scanned, errors, report = crash_check()
        crashes, syntax, other = classify(errors)
        crashes_total += len(crashes)
        print(f"crash check: transformers 4.44.2, {on_disk} .py files, {scanned} scanned, "
              f"{report['summary']['findings']} findings; internal errors (crashes): {len(crashes)}, "
              f"syntax errors: {len(syntax)}, other errors: {len(other)}")
        for label, items in (("CRASH", crashes), ("syntax", syntax), ("other", other)):
            for error in items:
                print(f"  {label}: {error['path']}: {error['message']}")
        if crashes:
            tracebacks.append(crash_tracebacks(CRASH_CORPUS, crashes))
        crash_summary = {"files": on_disk, "scanned": scanned, "crashes": crashes, "syntax": syntax, "other": other,
                         "findings": report["summary"]["findings"], "by_code": report["summary"].get("by_code", {})}
    print(f"crash count: {crashes_total} (benchmark corpus {len(corpus_crashes)}"
          + (", transformers " + str(crashes_total - len(corpus_crashes)) if not args.skip_crash_check else "") + ")")
    if any(tracebacks):
        print("tracebacks (crashing files re-run in-process, at most 2 per distinct message):")
        print("\n".join(text for text in tracebacks if text))

    RESULTS.write_text(json.dumps({
        "date": started.isoformat(timespec="seconds"),
        "machine": machine_line(),
        "load_average": {"start": load_start[0], "after_timing": load_end[0]},
        "stabfix": stabfix.__version__,
        "corpus": {"files": len(files), "lines": total_lines,
                   "packages": {name: len(items) for name, items in per_package.items()}},
        "rows": [{"tool": r.tool, "median_s": r.seconds, "times": r.times, "cpu_s": r.cpus, "findings": r.findings,
                  "note": r.note}
                 for r in bench.rows],
        "table": table,
        "determinism_problems": problems,
        "crash_check": crash_summary,
        "crash_count": crashes_total,
        "tracebacks": [text for text in tracebacks if text],
        "warnings": bench.warnings,
        "rules": rules,
    }, indent=2) + "\n", encoding="utf-8")
    log(f"results written to {RESULTS}")
    return 1 if problems or crashes_total or bench.determinism_compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
