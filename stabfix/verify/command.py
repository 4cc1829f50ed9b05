"""`stabfix verify [PATH]`: a seeded, instrumented smoke-train of the project's real training step.

Registered by the CLI with `app.command("verify")(verify)`. Imports no torch: the user's code and
all torch work run in a child process.
"""

from __future__ import annotations

import dataclasses

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperCommand

from stabfix import exit_codes
from stabfix.verify.settings import FlagError, Settings, SettingsError, parse_budget_flags, resolve_settings


# The oldest torch with every API verify uses: weak references to storages whose Python object
# torch preserves (UntypedStorage PyObject preservation, 2.1), the global optimizer step hooks (2.0)
# and `torch.cuda.memory._record_memory_history(max_entries=...)` / `_dump_snapshot` (2.1).
# pyproject.toml's `verify` extra says the same: torch>=2.1.
MIN_TORCH = (2, 1)


def torch_problem(version: str | None) -> str | None:
    """One line saying why verify cannot run with this torch (None: it can). `version` is the
    installed torch's version, None when torch is not installed."""
    if version is None:
        return ("verify needs PyTorch >= 2.1 in this environment: pip install 'stabfix[verify]' "
                "(CPU-only machine: pip install torch --index-url https://download.pytorch.org/whl/cpu first; "
                "scan and apply need no torch)")
    numbers = re.match(r"(\d+)\.(\d+)", version)
    if numbers and (int(numbers.group(1)), int(numbers.group(2))) < MIN_TORCH:
        return (f"verify needs torch >= {MIN_TORCH[0]}.{MIN_TORCH[1]}; this environment has torch {version} "
                "(scan and apply work with any torch)")
    return None


def installed_torch() -> str | None:
    from importlib import metadata
    from importlib.util import find_spec

    try:
        # What this interpreter can import decides: leftover metadata of a removed torch (or a torch that an
        # import hook hides) is no torch.
        if find_spec("torch") is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "0+unknown"  # a source build on sys.path has no metadata: let the child import it


if TYPE_CHECKING:
    from rich.console import Console


def escape(text: str) -> str:
    """rich's markup escape, imported when verify prints (the CLI registers this command at every start)."""
    from rich.markup import escape as escape_markup

    return escape_markup(text)


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    # Wide enough for the step rows and tables when output is piped (CI logs, files).
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 110
    return Console(stderr=stderr, width=width, highlight=False)


class VerifyCommand(TyperCommand):
    """`stabfix verify [PATH] [OPTIONS] -- COMMAND...`: everything after the first `--` is the training
    command, kept word for word (click would otherwise read its first word as PATH)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta[COMMAND_META] = args[at + 1:]
            args = args[:at]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- COMMAND...]"]


COMMAND_META = "stabfix.verify.command"


def verify(
    path: Annotated[
        Path, typer.Argument(help="Project folder: its stabfix.yaml / pyproject.toml `verify` section is used, "
                                  "and it is put on sys.path to import the entry.")
    ] = Path("."),
    entry: Annotated[Optional[str], typer.Option(help="module:function returning (models, optimizers, step) "
                                                      "or (models, step); overrides verify.entry.")] = None,
    steps: Annotated[Optional[int], typer.Option(help="Training steps to run (default 10).")] = None,
    warmup: Annotated[Optional[int], typer.Option(help="Steps excluded from growth and time statistics "
                                                       "(default 2).")] = None,
    seed: Annotated[Optional[int], typer.Option(help="Seed for torch, random and numpy (default 0).")] = None,
    device: Annotated[Optional[str], typer.Option(help="auto, cpu, cuda or cuda:N (default auto).")] = None,
    timeout: Annotated[Optional[float], typer.Option(help="Seconds for the whole run, entry included "
                                                          "(default 300).")] = None,
    budget: Annotated[Optional[list[str]], typer.Option(
        "--budget", metavar="KEY=VALUE", help="Repeatable: peak_memory_mb, memory_growth_mb_per_step, grad_norm, "
                         "step_time_ms, trainable_params. Overrides verify.budgets.KEY.")] = None,
    json_path: Annotated[Optional[Path], typer.Option("--json", metavar="FILE",
                                                      help="Write the full report as JSON.")] = None,
    snapshot: Annotated[Optional[Path], typer.Option(metavar="FILE", help="CUDA only: record allocator history and dump a "
                                                          "snapshot for pytorch.org/memory_viz.")] = None,
    baseline: Annotated[Optional[str], typer.Option(metavar="REF|REPORT.json", help="Compare with a git ref (run in a temporary "
                                                         "worktree) or a saved --json report.")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="Use this stabfix.yaml / pyproject.toml "
                                                                     "instead of the nearest one.")] = None,
    estimate: Annotated[bool, typer.Option("--estimate", help="Instead of the smoke-train: predict the full-size "
                                           "step's peak GPU memory with fake tensors (no GPU, nothing allocated); "
                                           "exit 1 when it does not fit.")] = False,
    estimate_entry: Annotated[Optional[str], typer.Option(metavar="MODULE:FUNCTION", help="Full-size entry for "
                                                          "--estimate; overrides verify.estimate.entry (default: the "
                                                          "verify entry).")] = None,
    device_memory_gb: Annotated[Optional[float], typer.Option(help="Device memory (GiB) --estimate checks "
                                                              "against; overrides verify.estimate.device_memory_gb.")] = None,
    gpu: Annotated[Optional[str], typer.Option(metavar="NAME", help="--estimate against a catalog card: "
                                               "h100-80gb, a100-40gb, l4-24gb, rtx4090-24gb, ...")] = None,
    exact_steps: Annotated[Optional[str], typer.Option(metavar="auto|all", help="Steps under exact per-op memory "
                                                       "accounting: auto (the last and every tenth) or all; "
                                                       "overrides verify.exact_steps.")] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", metavar="FILE", help="Draw memory, grad norm and loss per "
                                                 "step (and the baseline) into a .png or .svg (needs stabfix[plot]).")] = None,
    nproc_per_node: Annotated[Optional[int], typer.Option("--nproc-per-node", min=1, metavar="N", help="Run the "
                                                          "command (`-- python train.py ...`) on N local ranks through "
                                                          "torchrun (gloo on CPU, NCCL on CUDA): per-rank reports and "
                                                          "cross-rank checks; overrides verify.nproc_per_node.")] = None,
    ctx: typer.Context = None,  # type: ignore[assignment] - typer passes it
) -> None:
    """Run the training step a few times under instrumentation: memory, growth, gradients, numerics,
    step time; exit 1 when a health check or budget fails, 2 when the code could not run.

    `stabfix verify [PATH] -- python train.py ARGS...` runs your unmodified training command instead of
    a build_verify entry: its optimizer steps are the steps, and stabfix stops it after --steps."""
    console = _console()
    command_argv = ctx.meta.get(COMMAND_META) if ctx is not None else None
    try:
        if command_argv is not None and (estimate or estimate_entry or device_memory_gb is not None or gpu):
            code = _fail("--estimate needs a build_verify entry (--entry / verify.entry), not a command")
        elif estimate or estimate_entry or device_memory_gb is not None or gpu:
            code = _estimate(console, path, entry, seed, timeout, json_path, config, plot,
                             {"entry": estimate_entry, "device_memory_gb": device_memory_gb, "gpu": gpu})
        else:
            code = _verify(console, path, entry, steps, warmup, seed, device, timeout, budget or [],
                           json_path, snapshot, baseline, config, plot, exact_steps, command_argv,
                           nproc_per_node)
    except KeyboardInterrupt:
        _console(stderr=True).print("[red]error:[/red] interrupted", soft_wrap=True)
        code = exit_codes.ERROR
    except Exception as exc:  # noqa: BLE001 - never show a stabfix traceback
        _console(stderr=True).print(f"[red]error:[/red] stabfix internal error: {escape(type(exc).__name__)}: "
                                    f"{escape(str(exc))}", soft_wrap=True)
        code = exit_codes.ERROR
    raise typer.Exit(code)


def _fail(message: str) -> int:
    _console(stderr=True).print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    return exit_codes.ERROR


def _as_ranks(console: Console, settings: Any, worker: list[str], nproc: int, dropped: list[str]) -> Any:
    """The settings for a command typed as torchrun: its worker command on its number of ranks."""
    from stabfix.verify.torchrun import LaunchError

    if settings.nproc_per_node and settings.nproc_per_node != nproc:
        raise LaunchError(f"--nproc-per-node {settings.nproc_per_node} and the torchrun command's {nproc} disagree")
    note = f"torchrun command: verifying its {nproc} rank(s), as --nproc-per-node {nproc} -- {' '.join(worker)}"
    if dropped:
        note += f" (not passed on: --{', --'.join(dropped)}; verify launches with --standalone)"
    console.print(f"[dim]{escape(note)}[/dim]")
    return dataclasses.replace(settings, run=worker, nproc_per_node=nproc)


def _verify(console: Console, path: Path, entry: str | None, steps: int | None, warmup: int | None,
            seed: int | None, device: str | None, timeout: float | None, budget: list[str],
            json_path: Path | None, snapshot: Path | None, baseline: str | None,
            config_path: Path | None = None, plot_path: Path | None = None, exact_steps: str | None = None,
            command_argv: list[str] | None = None, nproc_per_node: int | None = None) -> int:
    from stabfix.config import ConfigError, load_config
    from stabfix.verify.command_report import print_command_end
    from stabfix.verify.render import print_header, print_report

    problem = _preflight_problem(path, plot_path, json_path)
    if problem:
        return _fail(problem)
    project = path.resolve() if path.is_dir() else path.resolve().parent
    try:
        config = load_config(project, config_path)
        overrides: dict[str, Any] = {
            "entry": entry, "steps": steps, "warmup": warmup, "seed": seed, "device": device,
            "timeout": timeout, "budgets": parse_budget_flags(budget) if budget else None,
            "exact_steps": exact_steps, "run": command_argv, "nproc_per_node": nproc_per_node,
        }
        where = f"{config.path}: " if config.path else ""
        try:
            settings = resolve_settings(config.verify, overrides)
        except FlagError:
            raise  # a bad flag: no config file to blame
        except SettingsError as exc:
            raise SettingsError(f"{where}{exc}") from None
    except (ConfigError, SettingsError) as exc:
        return _fail(str(exc))

    if settings.run:
        from stabfix.verify.torchrun import LaunchError, from_torchrun, torchrun_command

        try:
            typed = from_torchrun(list(settings.run))
            if typed is not None:  # `-- torchrun ... train.py`: the same run as --nproc-per-node N
                settings = _as_ranks(console, settings, *typed)
            if settings.nproc_per_node:
                torchrun_command(list(settings.run or []), settings.nproc_per_node, Path("."))
        except LaunchError as exc:
            return _fail(str(exc))
    label = _display(project)
    snap = str(snapshot.resolve()) if snapshot else None
    base_report: dict[str, Any] | None = None
    base_label = None
    if baseline:
        from stabfix.verify.baseline import BaselineError, load_report, looks_like_report, worktree

        base_label = baseline
        try:
            if looks_like_report(baseline):
                base_report = load_report(baseline)
                console.print(f"[dim]baseline: saved report {escape(baseline)}[/dim]")
            else:
                with worktree(project, baseline, settings.entry) as mapped:
                    print_header(console, settings, label, f"baseline {baseline}")
                    base_report, _ = _run_report(settings, mapped, console, f"{label} @ {baseline}")
                    base_report["baseline_ref"] = baseline
                    if base_report.get("error"):
                        console.print(f"[yellow]baseline {escape(baseline)} could not run:[/yellow] "
                                      f"{escape(base_report['error']['message'])}")
                    console.print()
        except BaselineError as exc:
            return _fail(str(exc))

    print_header(console, settings, label, "working tree" if base_report is not None else None)
    report, run_error = _run_report(settings, project, console, label, snap)
    if snap and not str(report["environment"].get("device", "")).startswith("cuda") and not run_error:
        console.print("[yellow]![/yellow] --snapshot records CUDA allocator history; this run was on CPU, "
                      "so no snapshot was written")
    print_command_end(console, report)
    if report.get("ranks"):
        from stabfix.verify.rank_report import print_rank_report

        print_rank_report(console, report)
    else:
        print_report(console, report)
    if base_report is not None and base_report.get("error"):
        # nothing to compare with: say so instead of a table of n/a, and exit 2
        report["baseline"] = {"ref": base_label, "report": base_report}
        report["comparison"] = []
        report["exit_code"] = exit_codes.ERROR
        console.print(f"\n[bold red]✗ no before/after comparison:[/bold red] the baseline {escape(str(base_label))} "
                      f"could not run ({escape(base_report['error']['message'])})")
    elif base_report is not None:
        from stabfix.verify.baseline import compare

        rows = compare(base_report, report)
        report["baseline"] = {"ref": base_label, "report": base_report}
        report["comparison"] = rows
        _print_comparison(console, rows, base_label or "baseline", base_report, report)
    failed = _write_outputs(console, report, json_path, plot_path)
    return failed if failed is not None else int(report["exit_code"])


def _run_report(settings: Settings, project: Path, console: Console, label: str,
                snapshot: str | None = None) -> tuple[dict[str, Any], Any]:
    """Run (one process, or `nproc_per_node` ranks through torchrun) and analyse: (report, run error)."""
    from stabfix.verify.command_report import add_command_checks, run_for
    from stabfix.verify.metrics import analyze
    from stabfix.verify.render import Progress

    if settings.nproc_per_node:
        from stabfix.verify.rank_report import rank_report
        from stabfix.verify.rank_runs import run_ranks

        progress = Progress(console)
        ranks = run_ranks(settings, project, settings.nproc_per_node,
                          lambda rank, event: progress(event) if rank == 0 else None)
        report = rank_report(settings, ranks, label)
        return report, report.get("error")
    run = run_for(settings, project, Progress(console), snapshot=snapshot)
    report = analyze(settings, run, label)
    add_command_checks(settings, run, report)
    return report, run.error


def _write_outputs(console: Console, report: dict[str, Any], json_path: Path | None,
                   plot_path: Path | None) -> int | None:
    """`--json` and `--plot` for a finished report; the exit code when one cannot be written."""
    if json_path is not None:
        try:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(_jsonable(report), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {json_path}: {exc}")
        console.print(f"[dim]report written to {escape(str(json_path))}[/dim]")
    if plot_path is not None:
        from stabfix.verify.plot import PlotError, plot_report

        if not report.get("steps") and not report.get("estimate"):
            console.print(f"[yellow]![/yellow] no step ran, so no picture was written to {escape(str(plot_path))}")
        else:
            try:
                plot_report(report, plot_path)
            except PlotError as exc:
                return _fail(str(exc))
            console.print(f"[dim]picture written to {escape(str(plot_path))}[/dim]")
    return None


def _preflight_problem(path: Path, plot_path: Path | None, json_path: Path | None = None) -> str | None:
    """Why the run cannot start (torch missing or too old, no such path, a `--json` that cannot be written,
    a `--plot` that cannot be drawn)."""
    problem = torch_problem(installed_torch())
    if problem:
        return problem
    if not path.exists():
        return f"{path}: no such file or directory"
    from stabfix.reports.destination import unwritable

    for output in (json_path, plot_path):
        if output is not None and (problem := unwritable(output)):
            return problem
    if plot_path is None:
        return None
    from stabfix.verify.plot import matplotlib_problem, path_problem

    return path_problem(plot_path) or matplotlib_problem()


def _estimate(console: Console, path: Path, entry: str | None, seed: int | None, timeout: float | None,
              json_path: Path | None, config_path: Path | None, plot_path: Path | None, flags: dict[str, Any]) -> int:
    """`verify --estimate`: the full-size step's peak on a GPU, predicted with fake tensors."""
    from stabfix.config import ConfigError, load_config
    from stabfix.verify.estimate import exit_code, print_estimate, run_estimate
    from stabfix.verify.settings import resolve_estimate

    problem = _preflight_problem(path, plot_path, json_path)
    if problem:
        return _fail(problem)
    project = path.resolve() if path.is_dir() else path.resolve().parent
    try:
        config = load_config(project, config_path)
        where = f"{config.path}: " if config.path else ""
        try:
            est = resolve_estimate(config.verify.get("estimate") if isinstance(config.verify, dict) else None, flags)
            fallback_entry = entry or (None if (config.verify or {}).get("entry") else est.entry)
            settings = resolve_settings(config.verify, {"entry": fallback_entry, "seed": seed, "timeout": timeout})
        except FlagError:
            raise
        except SettingsError as exc:
            raise SettingsError(f"{where}{exc}") from None
    except (ConfigError, SettingsError) as exc:
        return _fail(str(exc))
    if est.entry is None:
        est.entry = settings.entry
    if est.entry is None:  # the config names a command (verify.run): fake tensors need an entry
        return _fail("--estimate needs a build_verify entry (--entry, verify.entry or verify.estimate.entry); "
                     "verify.run names a command")
    label = _display(project)
    console.print(f"[bold]stabfix verify --estimate[/bold] {escape(label)} · entry {escape(est.entry)}")
    result = run_estimate(settings, est, project, console)
    print_estimate(console, result, f"{label} ({est.entry})")
    code = exit_code(result)
    out = {"stabfix_verify_report": 1, "project": label, "estimate": result["estimate"],
           "error": result.get("error"), "exit_code": code}
    failed = _write_outputs(console, out, json_path, plot_path)
    return failed if failed is not None else code


def _display(project: Path) -> str:
    try:
        rel = project.relative_to(Path.cwd())
        return str(rel) if str(rel) != "." else "."
    except ValueError:
        return str(project)


def _print_comparison(console: Console, rows: list[dict[str, Any]], ref: str, base: dict[str, Any],
                      cur: dict[str, Any]) -> None:
    from rich.table import Table

    console.print()
    table = Table(title=f"before/after: {escape(ref)} → working tree", title_justify="left", header_style="bold")
    table.add_column("metric")
    table.add_column("baseline", justify="right")
    table.add_column("current", justify="right")
    table.add_column("Δ", justify="right")
    table.add_column("verdict")
    colors = {"better": "green", "worse": "red", "same": "dim", "changed": "yellow", "n/a": "dim", "unclear": "yellow"}
    for r in rows:
        table.add_row(r["label"], r["baseline_text"], r["current_text"], r["delta_text"],
                      f"[{colors[r['verdict']]}]{r['verdict']}[/{colors[r['verdict']]}]")
    console.print(table)
    if base.get("memory_source") != cur.get("memory_source"):
        console.print(f"[yellow]![/yellow] memory sources differ ({base.get('memory_source')} vs "
                      f"{cur.get('memory_source')}): memory rows are not comparable")
    console.print("[dim]same = within 1% for memory, loss and grad norm, 25% for step time; "
                  "exact for counts[/dim]")
    for r in rows:
        if r.get("note"):
            console.print(f"[yellow]![/yellow] {escape(r['label'].strip())}: {r['verdict']}, {escape(r['note'])}; "
                          "better/worse needs 4+ timed steps in each run, medians 3 standard errors apart "
                          "and a rank test p < 0.05")


def _jsonable(value: Any) -> Any:
    """Strict JSON: non-finite floats become the strings "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


__all__ = ["verify", "Settings"]
