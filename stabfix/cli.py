"""The command line: wires discovery, the engine, fixes and reports. No analysis lives here.

Each command imports what it uses inside its function: `--version`, `--help`, `rules` and `explain` never
load the engine, and a scan served from the cache never loads libcst (tests/test_startup_imports.py,
bench/startup_speed.py)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from stabfix import __version__, exit_codes
from stabfix.reports import FORMATS

if TYPE_CHECKING:
    from stabfix.cache import ScanCache
    from stabfix.catalog import RuleSpec
    from stabfix.findings import FileError, RunResult
    from stabfix.project import Project
    from stabfix.scan_runner import RunInterrupted, Task

app = typer.Typer(
    name="stabfix",
    help="Find, fix and verify PyTorch training anti-patterns (OOM, slow-downs, NaNs, silent bugs).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: `stabfix[plot]` shows as written, and flags get no `<bool>` placeholder
    context_settings={"help_option_names": ["-h", "--help"]},
)
PROGRESS_MIN_FILES = 50


def _fail(message: str) -> typer.Exit:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/bold red] {escape(message)}")
    return typer.Exit(exit_codes.ERROR)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"stabfix {__version__}")
        raise typer.Exit(exit_codes.OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """stabfix: scan, apply, verify."""


PathsArg = Annotated[Optional[list[Path]], typer.Argument(metavar="PATH", help="Files or folders (default: current folder).")]
SelectOpt = Annotated[
    Optional[list[str]], typer.Option("--select", metavar="RULES", help="Rules to run: codes, prefixes (SF1) or names. Repeatable or comma-separated.")
]
IgnoreOpt = Annotated[Optional[list[str]], typer.Option("--ignore", metavar="RULES", help="Rules to skip: codes, prefixes or names.")]
FormatOpt = Annotated[str, typer.Option("--output-format", metavar="FORMAT", help=f"One of: {', '.join(FORMATS)}.")]
OutputOpt = Annotated[Optional[Path], typer.Option("-o", "--output", metavar="FILE", help="Write the report to FILE instead of stdout.")]
JobsOpt = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes (default: all cores).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write .stabfix_cache/.")]
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", metavar="FILE", help="Use this stabfix.yaml or pyproject.toml for every file, instead of each file's nearest config.")]
ExitZeroOpt = Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when findings remain (2 still means stabfix could not run).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print the findings (or statistics) and errors only: no summary, no warnings.")]
StatisticsOpt = Annotated[bool, typer.Option("--statistics", help="Text output: count the findings per rule instead of listing them.")]


def _split(values: Optional[list[str]]) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _display_path(path: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _execute(
    paths: Optional[list[Path]],
    select: Optional[list[str]],
    ignore: Optional[list[str]],
    output_format: str,
    output: Optional[Path],
    jobs: Optional[int],
    no_cache: bool,
    config_file: Optional[Path],
    mode: str,
    unsafe: bool = False,
    exit_zero: bool = False,
    quiet: bool = False,
    statistics: bool = False,
) -> None:
    from stabfix.cache import ScanCache
    from stabfix.catalog import SelectorError, load_catalog
    from stabfix.config import ConfigError
    from stabfix.config_tree import ConfigTree
    from stabfix.discovery import discover
    from stabfix.file_settings import FileSettings
    from stabfix.findings import FileResult
    from stabfix.project import Project, ProjectIndex
    from stabfix.reports.destination import unwritable
    from stabfix.run_control import exit_now
    from stabfix.scan_runner import RunInterrupted, Task, default_jobs

    if output_format not in FORMATS:
        raise _fail(f"unknown --output-format '{output_format}' (choose from {', '.join(FORMATS)})")
    if output is not None and (problem := unwritable(output)):
        raise _fail(problem)
    targets = paths or [Path(".")]
    try:  # each file runs under the nearest config above it (stabfix.config_tree), or --config's
        catalog = load_catalog(examples=False)
        settings = FileSettings(ConfigTree(config_file), catalog, _split(select) if select else None, _split(ignore))
        for target in targets:
            settings.check(target)
        found = discover(targets, exclusion_for=settings.tree.exclusion)
        tasks = [
            Task(str(path), _display_path(path), settings.codes_for(path), mode, unsafe, settings.torch_target(path))
            for path in found.files
        ]
    except (ConfigError, SelectorError) as exc:
        raise _fail(str(exc)) from None

    warnings = [] if quiet else [
        *(f"no Python files found in {_display_path(folder)}" for folder in found.empty_dirs), *settings.warnings
    ]
    if warnings:  # rich is loaded only to print something (a JSON report has no use for it)
        from rich.console import Console

        stderr = Console(stderr=True, highlight=False, soft_wrap=True)  # a warning names paths: one line each
        for warning in warnings:
            stderr.print(f"warning: {warning}", markup=False)
    codes = settings.codes_in_use
    cache = None if no_cache or mode != "scan" else ScanCache(settings.tree.config_for(targets[0]).root).load()
    # The files of this scan, which a file's analysis may consult (a model class, a loss of another file).
    scanned_folders = [target if target.is_dir() else target.parent for target in targets]
    project = Project(ProjectIndex([str(path) for path in found.files], [str(folder) for folder in scanned_folders]))
    try:
        run = _run_with_progress(tasks, jobs or default_jobs(), cache, project)
    except RunInterrupted as stop:
        _report_interrupted(stop, mode)
        exit_now(exit_codes.TERMINATED if stop.signum == signal.SIGTERM else exit_codes.INTERRUPTED)
    run.results.extend(FileResult(error.path, error=error) for error in found.errors)
    run.results.sort(key=lambda result: result.path)
    _emit(run, len(tasks), output_format, output, mode, catalog, sorted(codes), quiet, statistics, unsafe)
    code = _exit_code(run, found.errors, mode)
    global _run_reported
    _run_reported = True
    raise typer.Exit(exit_codes.OK if exit_zero and code == exit_codes.FINDINGS else code)


def _report_interrupted(stop: RunInterrupted, mode: str) -> None:
    lines = ["interrupted"]
    if mode in ("apply", "noqa"):
        count = len(stop.written)
        lines[0] += (
            f": {count} file{'s' if count != 1 else ''} already rewritten (each one whole), the others unchanged"
            if count else ": no file was rewritten"
        )
        lines.extend(f"rewritten: {path}" for path in stop.written)
    sys.stderr.write("\n".join(lines) + "\n")


def _run_with_progress(tasks: list[Task], jobs: int, cache: ScanCache | None, project: Project | None = None) -> RunResult:
    from stabfix.scan_runner import run_tasks

    show = len(tasks) >= PROGRESS_MIN_FILES and sys.stderr.isatty() and not os.environ.get("CI")
    if not show:
        return run_tasks(tasks, jobs, cache, project=project)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("scan", total=len(tasks))
        return run_tasks(tasks, jobs, cache, on_progress=lambda: progress.advance(bar), project=project)


def _emit(
    run: RunResult,
    files: int,
    output_format: str,
    output: Optional[Path],
    mode: str,
    catalog,
    codes,
    quiet: bool = False,
    statistics: bool = False,
    unsafe: bool = False,
) -> None:
    from stabfix.reports import render_github, render_json, render_sarif

    if mode == "diff":
        diffs = "".join(result.diff for result in run.results if result.diff)
        _write(diffs, output, markup=False)
        if output_format == "text":
            from rich.console import Console
            from rich.markup import escape

            from stabfix.reports.text import diff_note, render_errors

            note = "" if quiet else escape(diff_note(run, unsafe)) + "\n"
            Console(stderr=True, highlight=False, soft_wrap=True).print(render_errors(run) + note, end="")
            return
    if output_format == "json":
        _write(render_json(run, files), output, markup=False)
    elif output_format == "sarif":
        _write(render_sarif(run, catalog, codes), output, markup=False)
    elif output_format == "github":
        _write(render_github(run), output, markup=False)
    elif mode != "diff":
        from rich.console import Console

        from stabfix.reports.text import render_errors, render_text

        Console(stderr=True, highlight=False, soft_wrap=True).print(render_errors(run), end="")
        _write(render_text(run, files, mode, quiet=quiet, statistics=statistics), output, markup=True)


def _write(text: str, output: Optional[Path], markup: bool) -> None:
    if output is not None:
        if markup:
            from rich.text import Text

            text = Text.from_markup(text).plain
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None
        return
    if markup:
        from rich.console import Console

        Console(highlight=False, soft_wrap=True).print(text, end="")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _exit_code(run: RunResult, discovery_errors: list[FileError], mode: str) -> int:
    if any(error.fatal for error in discovery_errors):
        return exit_codes.ERROR
    if mode == "diff":  # like `ruff check --diff`: 1 when something would change; unfixable findings do not count
        return exit_codes.FINDINGS if run.errors or any(result.diff for result in run.results) else exit_codes.OK
    if run.findings or run.errors:
        return exit_codes.FINDINGS
    return exit_codes.OK


@app.command()
def scan(
    paths: PathsArg = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    output_format: FormatOpt = "text",
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    config: ConfigOpt = None,
    add_noqa: Annotated[
        bool, typer.Option("--add-noqa", help="Write `# noqa: CODE` on the line of every current finding (merged into an existing directive).")
    ] = False,
    statistics: StatisticsOpt = False,
    exit_zero: ExitZeroOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Report anti-patterns. Exit 0: clean; 1: findings or unreadable files; 2: could not run."""
    mode = "noqa" if add_noqa else "scan"
    _execute(
        paths, select, ignore, output_format, output, jobs, no_cache or add_noqa, config, mode=mode,
        exit_zero=exit_zero, quiet=quiet, statistics=statistics,
    )


@app.command()
def apply(
    paths: PathsArg = None,
    unsafe_fixes: Annotated[bool, typer.Option("--unsafe-fixes", help="Also apply fixes that change behaviour.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Print unified diffs and write nothing; exit 1 if something would change (or a file could not be analysed), else 0.")] = False,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    output_format: FormatOpt = "text",
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    config: ConfigOpt = None,
    statistics: StatisticsOpt = False,
    exit_zero: ExitZeroOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Rewrite code to fix findings (safe fixes only unless --unsafe-fixes). Exit 0: nothing left."""
    # apply always analyses afresh (the cache holds scan results only), so --no-cache is accepted as a no-op
    _execute(
        paths, select, ignore, output_format, output, jobs, True, config, mode="diff" if diff else "apply",
        unsafe=unsafe_fixes, exit_zero=exit_zero, quiet=quiet, statistics=statistics,
    )


@app.command("rules")
def rules_command() -> None:
    """List the rule catalog."""
    from rich.console import Console
    from rich.table import Table

    from stabfix.catalog import load_catalog

    table = Table(title="stabfix rules")
    for column in ("code", "name", "category", "severity", "fix", "default", "summary"):
        table.add_column(column, overflow="fold")
    for spec in load_catalog(examples=False).values():
        default = "on" if spec.enabled_by_default else "off"
        table.add_row(spec.code, spec.name, spec.category, spec.severity, spec.fix_label, default, spec.summary)
    # Pipes get a wide table so that codes and names stay greppable on one line.
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@app.command("server")
def server_command(
    stdio: Annotated[bool, typer.Option("--stdio", help="Talk over stdin/stdout (the only transport; accepted for clients that pass it).")] = False,
) -> None:
    """Run the language server for editors (LSP over stdin/stdout); needs `pip install "stabfix\\[lsp]"`."""
    from stabfix.server import ServerUnavailable, serve_stdio  # pygls is imported by this command only

    try:
        serve_stdio()
    except ServerUnavailable as exc:
        raise _fail(str(exc)) from None


@app.command()
def explain(rule: Annotated[str, typer.Argument(help="A rule code (SF101) or name (loss-target-requires-grad).")]) -> None:
    """Show a rule's documentation."""
    from rich.console import Console

    from stabfix.catalog import load_catalog

    catalog = load_catalog(examples=False)
    by_name = {spec.name: spec for spec in catalog.values()}
    spec = catalog.get(rule.upper()) or by_name.get(rule)
    if spec is None:
        raise _fail(f"unknown rule '{rule}' (see `stabfix rules`)")
    from rich.markdown import Markdown  # only this command renders Markdown

    Console().print(Markdown(explain_markdown(spec)))


def explain_markdown(spec: RuleSpec) -> str:
    # `seed` in the rule files points at the team's internal write-ups; users get the rule itself
    from stabfix.docs import rule_url

    return "\n\n".join(
        [
            f"# {spec.code} {spec.name}",
            f"*{spec.category} · {spec.severity}* — {spec.summary}",
            f"## What it does\n{spec.docs['what_it_does']}",
            f"## Why is this bad?\n{spec.docs['why_is_this_bad']}",
            f"## Example\n```python\n{spec.docs['example']}\n```",
            f"## Use instead\n```python\n{spec.docs['use_instead']}\n```",
            f"## Fix safety\n**{spec.fix_label}** — {spec.fix_reason}",
            f"Online: {rule_url(spec.code, spec.name)}",
        ]
    )


def _register_verify() -> None:
    try:
        from stabfix.verify.command import VerifyCommand, verify
    except ImportError:
        return
    app.command("verify", cls=VerifyCommand)(verify)


_register_verify()


def _tolerate_narrow_terminals() -> None:
    """An ASCII or legacy-codepage stdout (PYTHONIOENCODING=ascii, a cp1252 console) gets `?` for the characters it
    cannot show instead of a UnicodeEncodeError half-way through the report."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


# A scan or apply that has reported (and written every file) ends without tearing the interpreter down: freeing
# the engine's modules and what the run kept one object at a time is serial work after the workers are done
# (~0.1 s of a two-job scan, more with one job: its process holds every model the project kept). Only from
# `main`, the command line's own process: a caller of `app` (tests, a library) keeps its interpreter.
_run_reported = False


def main() -> None:
    _tolerate_narrow_terminals()
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(exit_codes.INTERRUPTED)
    except SystemExit as done:
        if _run_reported and isinstance(done.code, int):
            from stabfix.run_control import exit_now

            exit_now(done.code)
        raise
