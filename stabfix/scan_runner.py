"""Running the engine over many files: per-file tasks, in parallel across cores, cached, ordered.

Workers only analyse and compute new contents; the parent process alone writes files, between two of which
a Ctrl-C or SIGTERM stops the run (stabfix.run_control), so it always knows which files were rewritten.

Files whose results the cache still holds are served by the parent before any worker starts, and the
engine (libcst, the model, the checkers) is imported only by a process that analyses a file, or by the
parent just before it forks the workers that will (they share it): a re-scan of an unchanged tree loads
none of it (bench/README.md, "Startup and warm scan beside ruff")."""

from __future__ import annotations

import difflib
import gc
import itertools
import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Literal

from stabfix import collector
from stabfix.cache import ScanCache, content_key
from stabfix.catalog import load_catalog
from stabfix.findings import FileError, FileResult, Finding, RunResult
from stabfix.notebook import is_notebook, read_notebook
from stabfix.run_control import SignalGuard, Stopped, abandon_workers, start_worker
from stabfix.scan_lanes import Lanes, file_weights
from stabfix.source import SourceError, read_regular_file, read_source, replace_content
from stabfix.suppression import add_noqa
from stabfix.target import TorchTarget

if TYPE_CHECKING:
    from stabfix.engine import Analysis
    from stabfix.project import Project

Mode = Literal["scan", "apply", "diff", "noqa"]
WRITING_MODES = ("apply", "noqa")
SERIAL_THRESHOLD = 8


@dataclass(frozen=True)
class Task:
    path: str
    display: str
    codes: tuple[str, ...]
    mode: Mode
    unsafe: bool
    torch_target: TorchTarget | None = None  # the oldest torch the file's project allows (stabfix.target)


@dataclass
class PendingWrite:
    """New content for a file, for the parent to write; `unwritten_findings` are reported if it cannot."""

    path: str
    original: bytes
    data: bytes
    unwritten_findings: list[Finding]


@dataclass
class TaskOutcome:
    result: FileResult
    cache_key: str | None = None
    write: PendingWrite | None = None
    consulted: dict | None = None  # what the analysis read of other files (`Consulted.as_json()`)


class RunInterrupted(Exception):
    """The run was stopped by a signal; `written` lists the files it had already rewritten, each one whole."""

    def __init__(self, signum: int, written: list[str]) -> None:
        super().__init__(signum)
        self.signum = signum
        self.written = written


@lru_cache(maxsize=64)
def _classes_for(codes: tuple[str, ...]):
    from stabfix.checkers import checker_classes

    available = checker_classes()
    return [available[code] for code in codes if code in available]


# Set in the parent before forking so workers share it copy-on-write.
_CACHE: ScanCache | None = None
# Whether the run has a cache to fill: without one (`--no-cache`) no file's key is hashed nor what its analysis
# consulted collected for it. A spawned worker is told (it has no `_CACHE` of its own).
_CACHING = False
# The other files of the scan (stabfix.project); each process builds what its own files ask for.
_PROJECT: Project | None = None
# A worker's files: the run's tasks, the plan of which it takes next (stabfix.scan_lanes), and its lane there.
_TASKS: list[Task] = []
_LANES: Lanes | None = None
_LANE = 0


# A file's analysis allocates a libcst tree and model facts of hundreds of thousands of objects that all
# live until the file is done (and the project keeps other files' models for later files). A collection
# during the analysis walks all of them, alive, to free little, so none runs during one (`stabfix.collector`);
# one right after the file walks only what was allocated since the file began, and frees what reference
# counting could not (the model's cycles). The thresholds govern the rest of the run (the parent's
# bookkeeping, a fix loop between its analyses); the first stays as a bound there.
_COLLECTOR_THRESHOLDS = (1_000_000, 20, 100)
# What outlives a file (its tree and the other files' models the project keeps, the caches) would be walked
# again by every later collection of the middle generation, to be found alive; it is set aside instead
# (`gc.freeze`) right after the file's collection, and so is the file's own tree as soon as it is parsed
# (a libcst tree has no cycles: it is freed by reference counting when the project drops it, frozen or
# not). What is set aside and dies later in cycles is freed by a full collection once the project has
# dropped as many models as it keeps (a model's facts refer to each other: a dropped model is such garbage),
# and at least once in as many files as the collector's own rule would wait for one (20 * 100).
# bench/README.md, "Cold scan: one collection per file" and "gccycles (session 25)".
_DROPPED_MODELS_PER_FULL_COLLECTION = 128
_FILES_PER_FULL_COLLECTION = 2000


@dataclass
class _SetAside:
    active: bool = False  # only while the caller's process had nothing frozen of its own: that is left as it is
    files: int = 0  # files analysed since the last full collection
    dropped: int = 0  # the project's count of dropped models at the last full collection


_set_aside = _SetAside()


def _scan_collections() -> None:
    gc.set_threshold(*_COLLECTOR_THRESHOLDS)
    global _set_aside
    _set_aside = _SetAside(active=gc.get_freeze_count() == 0)


@contextmanager
def _fewer_collections():
    before = gc.get_threshold()
    _scan_collections()
    try:
        yield
    finally:
        if _set_aside.active:
            gc.unfreeze()
            _set_aside.active = False
        gc.set_threshold(*before)


def _collect_after_file() -> None:
    """What the file left in cycles; then what outlived it is set aside (see `_SetAside`)."""
    if not _set_aside.active:
        gc.collect(1 if gc.get_count()[1] >= _COLLECTOR_THRESHOLDS[1] else 0)
        return
    # the middle generation holds only what a collection during this file moved there: it is walked too,
    # or the file's model would be set aside with it
    gc.collect(1)
    _set_aside.files += 1
    dropped = _PROJECT.models_dropped if _PROJECT is not None else 0
    newly_dropped = dropped - _set_aside.dropped
    if _set_aside.files >= _FILES_PER_FULL_COLLECTION or newly_dropped >= _DROPPED_MODELS_PER_FULL_COLLECTION:
        gc.unfreeze()
        gc.collect()
        _set_aside.files, _set_aside.dropped = 0, dropped
    gc.freeze()


def _set_aside_last_file() -> None:
    """After the run's last file, what it left is set aside uncollected (its model's cycles: 2.25 M objects
    for a 50,000-line file, a 1.6 s collection): the CLI reports and ends without the interpreter's
    teardown (`run_control.exit_now`), and a caller that goes on frees it with its later full collections
    (the run's end puts what it set aside back in the oldest generation)."""
    if _set_aside.active:
        gc.freeze()
    else:
        _collect_after_file()


def _set_aside_parsed_tree() -> None:
    """The file's tree, just parsed: nothing of the analysis is allocated yet, so only the tree and what
    the file's preparation allocated are set aside with it."""
    if _set_aside.active:
        gc.freeze()


def _start_worker(parent_pid: int, project: Project | None, tasks: list[Task], lanes: Lanes, caching: bool) -> None:
    global _PROJECT, _TASKS, _LANES, _LANE, _CACHING
    _PROJECT = project  # a spawned worker gets it pickled (the file list only); a forked one has it already
    _CACHING = caching
    _TASKS, _LANES = tasks, lanes
    _LANE = lanes.join()
    if not _set_aside.active:  # a forked worker inherits the parent's collections, what it set aside included
        _scan_collections()
    start_worker(parent_pid)


def _set_aside_before_fork() -> None:
    """What the parent has allocated (the engine's modules, the catalog, the file list) is set aside before it
    forks the workers: a worker's collections then never walk it (each walked ~50 K such objects at its first
    file), nor write to the pages that hold it, which the workers share with the parent until written to."""
    if _set_aside.active:
        gc.freeze()


def _load_engine_for(tasks: list[Task]) -> None:
    """Import the engine and the tasks' checkers once, in the parent, for every forked worker to share (each
    imported them itself: ~0.45 s of CPU a worker, bench/README.md "affinity (session 25)")."""
    import stabfix.engine  # noqa: F401

    for codes in dict.fromkeys(task.codes for task in tasks):
        _classes_for(codes)


def _next_run() -> list[tuple[int, TaskOutcome]]:
    """In a worker: the next run of files of its lane, analysed, by their index; [] when none is left."""
    return [(index, process(_TASKS[index])) for index in _LANES.claim(_LANE)]  # type: ignore[union-attr]


def _outcomes_of_workers(executor: ProcessPoolExecutor, workers: int) -> Iterable[tuple[int, TaskOutcome]]:
    """The workers' outcomes, a run at a time as each is done; a run is asked for ahead of each worker's
    current one so that none waits, and until a worker finds none left."""
    pending = {executor.submit(_next_run) for _ in range(workers + 1)}
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            run = future.result()
            if run:
                pending.add(executor.submit(_next_run))
                yield from run


def process(task: Task, last: bool = False) -> TaskOutcome:
    """Analyse (and for apply/diff, fix) one file. Never raises: problems become a FileError. `last`: the
    run's last file in this process."""
    # A scan analyses the file once: the collector stays paused until the collection after the file, which
    # then walks what the analysis allocated once (resumed in between, it would walk it twice). A fix loop
    # analyses a file up to MAX_ROUNDS times, and each analysis pauses only for itself (stabfix.collector).
    with collector.paused() if task.mode == "scan" else nullcontext():
        try:
            return _outcome_of(task)
        finally:
            _set_aside_last_file() if last else _collect_after_file()


def _serially(tasks: list[Task]) -> Iterable[tuple[int, TaskOutcome]]:
    for index, task in enumerate(tasks):
        yield index, process(task, last=index == len(tasks) - 1)


def _outcome_of(task: Task) -> TaskOutcome:
    from stabfix.engine import AnalysisError
    from stabfix.fixer import FixError

    try:
        return _process(task)
    except (SourceError, AnalysisError, FixError) as exc:
        return TaskOutcome(FileResult(task.display, error=FileError(task.display, str(exc))))
    except RecursionError:
        return TaskOutcome(FileResult(task.display, error=FileError(task.display, "code nested too deeply to analyse")))
    except Exception as exc:  # a stabfix bug must not take the whole run down
        try:
            detail = str(exc)
        except RecursionError:  # an exception carrying a deeply nested node: its repr recurses too
            detail = "(message too deeply nested to show)"
        message = f"internal error while analysing ({exc.__class__.__name__}: {detail}); please report it"
        return TaskOutcome(FileResult(task.display, error=FileError(task.display, message)))


def _located(source, findings: list[Finding]) -> list[Finding]:
    """Findings as the user finds them in the file: in a notebook, at their cell and line."""
    locate = getattr(source, "locate", None)
    return [locate(finding) for finding in findings] if locate is not None else findings


def fix_text(*args, **kwargs):
    """`stabfix.fixer.fix_text`, imported by the first file that has fixes to make."""
    from stabfix.fixer import fix_text as fix_file

    return fix_file(*args, **kwargs)


def _cache_key(task: Task, raw: bytes) -> str:
    # The torch target decides which fixes are offered, so it is part of what produced the results; with
    # other files to consult, so is where the file lies (its imports resolve from there).
    where = (os.path.abspath(task.path),) if _PROJECT is not None else ()
    return content_key(raw, (*task.codes, repr(task.torch_target), *where))


def _from_cache(task: Task, key: str) -> TaskOutcome | None:
    """The file's result as the cache holds it, while everything its analysis consulted is as it was."""
    cached = _CACHE.get(key) if _CACHE is not None else None
    if cached is None or not _still_holds(_CACHE.consulted_by(key)):  # type: ignore[union-attr]
        return None
    if task.mode != "scan" and any(item["fix_safety"] != "none" for item in cached):
        return None  # apply and diff must compute the fixes
    findings = [Finding(**{**item, "path": task.display}) for item in cached]
    return TaskOutcome(FileResult(task.display, findings=findings), key, consulted=_CACHE.consulted_by(key))  # type: ignore[union-attr]


def _served_by_parent(task: Task) -> TaskOutcome | None:
    """A cache hit found without a worker; None sends the file to one (also when it cannot be read: the
    worker reports why). A notebook's key is its file's bytes too."""
    try:
        raw = read_regular_file(Path(task.path))
    except (SourceError, OSError):
        return None
    return _from_cache(task, _cache_key(task, raw))


def _process(task: Task) -> TaskOutcome:
    # a notebook reads as one module of its code cells (stabfix.notebook), with the same interface
    source = read_notebook(Path(task.path)) if is_notebook(task.path) else read_source(Path(task.path))
    key = _cache_key(task, source.raw) if _CACHING else None
    served = _from_cache(task, key) if key is not None else None
    if served is not None:
        return served
    from stabfix.engine import AnalysisError, analyse_text

    specs = load_catalog(examples=False)
    classes = _classes_for(task.codes)
    view = _PROJECT.view(task.path, on_parsed=_set_aside_parsed_tree) if _PROJECT is not None else None
    try:
        analysis = analyse_text(source.text, task.display, classes, specs, task.torch_target, view)
    except AnalysisError as error:
        in_cells = getattr(source, "in_cells", None)  # a notebook's syntax error names its cell
        raise AnalysisError(in_cells(str(error)) if in_cells else str(error)) from None
    consulted = view.consulted.as_json() if view is not None and _CACHING else None
    if task.mode == "noqa":
        outcome = _add_noqa(task, source, analysis.findings, specs)
        _with_rule_failures(outcome.result, analysis)
        return outcome
    if task.mode == "scan" or not any(item.fix for item in analysis.findings):
        findings = _located(source, [item.finding for item in analysis.findings])
        return TaskOutcome(_with_rule_failures(FileResult(task.display, findings=findings), analysis), key, consulted=consulted)
    outcome = fix_text(source.text, task.display, classes, specs, task.unsafe, analysis, task.torch_target, view)
    remaining = _located(source, [item.finding for item in outcome.remaining.findings])
    result = _with_rule_failures(
        FileResult(task.display, findings=remaining, fixes_applied=outcome.resolved), analysis, outcome.remaining
    )
    if outcome.text != source.text:
        if task.mode == "diff":
            result.diff = source.diff(outcome.text, task.display) if is_notebook(task.path) else "".join(
                difflib.unified_diff(
                    source.text.splitlines(keepends=True),
                    outcome.text.splitlines(keepends=True),
                    fromfile=f"a/{task.display}",
                    tofile=f"b/{task.display}",
                )
            )
            result.findings = _located(source, [item.finding for item in analysis.findings])
        else:
            unwritten = _located(source, [item.finding for item in analysis.findings])
            write = PendingWrite(task.path, source.raw, source.encode(outcome.text), unwritten)
            return TaskOutcome(result, None, write)
    return TaskOutcome(result, None if outcome.text != source.text else key, consulted=consulted)


def _still_holds(consulted: dict | None) -> bool:
    """A cached result that consulted other files is served only while they are as they were."""
    if consulted is None:
        return True
    return _PROJECT is not None and _PROJECT.index.still_holds(consulted)


def _with_rule_failures(result: FileResult, *analyses: Analysis) -> FileResult:
    """The file's error line for the rules that failed on it; their findings are already gone, every
    other rule's are kept (and a result with an error is never cached)."""
    from stabfix.engine import failures_message

    message = failures_message([failure for analysis in analyses for failure in analysis.failures])
    if message is not None:
        result.error = FileError(result.path, message, partial=True)
    return result


def _add_noqa(task: Task, source, findings, specs) -> TaskOutcome:
    """`scan --add-noqa`: suppress every current finding where it is reported; the file is rewritten
    atomically only when something was added (so a second run changes nothing)."""
    codes_by_line: dict[int, set[str]] = {}
    for item in findings:
        codes_by_line.setdefault(item.finding.line, set()).add(item.finding.code)
    text, added = add_noqa(source.text, codes_by_line, {code: spec.name for code, spec in specs.items()})
    if text != source.text:
        try:
            compile(text, task.display, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            from stabfix.fixer import FixError

            raise FixError("adding the noqa comments would break the file; left unchanged") from None
        unwritten = _located(source, [item.finding for item in findings])
        write = PendingWrite(task.path, source.raw, source.encode(text), unwritten)
        return TaskOutcome(FileResult(task.display, fixes_applied=added), write=write)
    return TaskOutcome(FileResult(task.display, fixes_applied=added))


def _commit(outcome: TaskOutcome, written: list[str]) -> None:
    """Write a worker's new content; a file that cannot or must not be rewritten keeps its findings and gets
    the reason as its error."""
    pending, result = outcome.write, outcome.result
    outcome.write = None
    try:
        replace_content(Path(pending.path), pending.original, pending.data)
    except SourceError as exc:
        earlier = f"; {result.error.message}" if result.error is not None else ""  # a rule that failed on it
        result.error = FileError(result.path, f"{exc}{earlier}")
        result.findings = pending.unwritten_findings
        result.fixes_applied = 0
    else:
        written.append(result.path)


def _one_task_per_file(tasks: list[Task]) -> list[Task]:
    """Two paths to one file (a symlink and its target, two hard links) must not both rewrite it: the first
    path listed does."""
    seen: set[tuple[int, int]] = set()
    kept = []
    for task in tasks:
        if task.mode in WRITING_MODES:
            try:
                status = os.stat(task.path)
            except OSError:
                status = None  # reading it reports why
            if status is not None:
                identity = (status.st_dev, status.st_ino)
                if identity in seen:
                    continue
                seen.add(identity)
        kept.append(task)
    return kept


def _split_served(tasks: list[Task]) -> tuple[list[TaskOutcome], list[Task]]:
    """The results the cache serves, and the tasks left for the engine."""
    served, left = [], []
    for task in tasks:
        outcome = _served_by_parent(task)
        if outcome is None:
            left.append(task)
        else:
            served.append(outcome)
    return served, left


def run_tasks(
    tasks: list[Task],
    jobs: int,
    cache: ScanCache | None,
    on_progress: Callable[[], None] | None = None,
    project: Project | None = None,
) -> RunResult:
    """Raises RunInterrupted when SIGINT or SIGTERM stops the run. `project`: the scan's files, which
    each file's analysis may consult (stabfix.project); None analyses every file alone."""
    global _CACHE, _CACHING, _PROJECT
    _CACHE, _CACHING = cache, cache is not None
    _PROJECT = project
    tasks = _one_task_per_file(tasks)
    run = RunResult()
    live_keys: set[str] = set()
    written: list[str] = []
    executor = None
    with SignalGuard() as guard, _fewer_collections():
        try:
            outcomes: Iterable[tuple[int, TaskOutcome]]
            served, tasks = _split_served(tasks) if cache is not None else ([], tasks)
            workers = max(1, min(jobs, len(tasks)))
            if workers == 1 or len(tasks) <= SERIAL_THRESHOLD:
                outcomes = _serially(tasks)
            else:
                context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
                if context.get_start_method() == "fork":
                    _load_engine_for(tasks)
                    _set_aside_before_fork()
                lanes = Lanes(file_weights([task.path for task in tasks]), workers, context)
                executor = ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=context,
                    initializer=_start_worker,
                    initargs=(os.getpid(), project, tasks, lanes, cache is not None),
                )
                outcomes = _outcomes_of_workers(executor, workers)
            # the cache gets the results in the order of the files (its file is the same whatever the job count)
            to_cache: list[tuple[int, TaskOutcome]] = []
            for index, outcome in itertools.chain(((-1, outcome) for outcome in served), outcomes):
                if outcome.write is not None:
                    with guard.held():
                        _commit(outcome, written)
                run.results.append(outcome.result)
                if outcome.cache_key is not None and outcome.result.error is None:
                    live_keys.add(outcome.cache_key)
                    to_cache.append((index, outcome))
                if on_progress is not None:
                    on_progress()
            for _, outcome in sorted(to_cache, key=lambda item: item[0]) if cache is not None else ():
                findings = [asdict(finding) for finding in outcome.result.findings]
                cache.put(outcome.cache_key, findings, outcome.consulted)  # type: ignore[arg-type]
        except Stopped as stop:
            guard.hold_from_now()
            if executor is not None:
                abandon_workers(executor)
                executor = None
            raise RunInterrupted(stop.signum, sorted(written)) from None
        finally:
            if executor is not None:
                executor.shutdown()
            _CACHE, _CACHING = None, False
            _PROJECT = None
    if cache is not None:
        cache.save(live_keys)
    run.results.sort(key=lambda result: result.path)
    for result in run.results:
        result.findings.sort(key=Finding.sort_key)
    return run


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)
