"""`stabfix verify --nproc-per-node N -- python train.py ARGS`: the user's command, launched through
`torch.distributed.run` (torchrun) on one node, and what each rank left behind.

The command is rewritten, not wrapped: `python [-u] SCRIPT ARGS` or `python -m MODULE ARGS` becomes
`python -m torch.distributed.run --standalone --nproc-per-node N --log-dir DIR --tee 3 SCRIPT ARGS`
with the same Python. Every worker is a Python process of the command, so verify's bootstrap
instruments each one. torchrun's log folder keeps each rank's stdout/stderr apart; a hung rank's
stack (faulthandler, on SIGUSR1) is read back from its own stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from pathlib import Path

# torchrun's per-worker log files: LOG_DIR/<run id>/attempt_<n>/<local rank>/stderr.log
_RANK_LOG = re.compile(r"attempt_(\d+)[/\\](\d+)[/\\]stderr\.log$")
_DUMP_HEAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+ .*\(most recent call first\):$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_STABFIX_DIR = str(Path(__file__).resolve().parent.parent) + os.sep


class LaunchError(ValueError):
    """The command cannot be launched through torchrun as written (one line for the user)."""


def _is_python(word: str) -> bool:
    return re.fullmatch(r"python(\d+(\.\d+)*)?(\.exe)?", Path(word).name) is not None


def torchrun_command(command: list[str], nproc: int, log_dir: Path) -> list[str]:
    """The command that runs `command` (a Python script or module) on `nproc` local ranks."""
    if nproc < 1:
        raise LaunchError(f"--nproc-per-node must be at least 1 (got {nproc})")
    if not command or not _is_python(command[0]):
        shown = command[0] if command else "nothing"
        raise LaunchError(f"--nproc-per-node runs `python SCRIPT ...` or `python -m MODULE ...` through torchrun; "
                          f"the command starts with {shown!r}")
    rest = list(command[1:])
    while rest and rest[0] == "-u":  # unbuffered: verify runs every process unbuffered anyway
        rest.pop(0)
    if rest[:1] == ["-m"] and len(rest) >= 2:
        target = ["-m", rest[1]]
        args = rest[2:]
    elif rest and not rest[0].startswith("-"):
        target = [rest[0]]
        args = rest[1:]
    else:
        raise LaunchError(f"--nproc-per-node: cannot pass the Python option {rest[0] if rest else '(none)'!r} to "
                          "every worker; give `python SCRIPT ...` or `python -m MODULE ...`")
    return [command[0], "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
            "--log-dir", str(log_dir), "--tee", "3", *target, *args]


_TORCHRUN_MODULES = ("torch.distributed.run",)
# torchrun options that choose how the one node's ranks meet: verify launches with --standalone, which
# picks its own free port, so these are not passed on
_RENDEZVOUS_OPTIONS = ("master_addr", "master_port", "rdzv_backend", "rdzv_endpoint", "rdzv_id", "rdzv_conf",
                       "max_restarts", "monitor_interval", "start_method", "redirects", "tee", "log_dir", "role")


def _torchrun_args(command: list[str]) -> tuple[str, list[str]] | None:
    """(the Python that runs the workers, torchrun's own arguments) when `command` is `torchrun ...` or
    `python -m torch.distributed.run ...`; None for any other command."""
    if not command:
        return None
    if Path(command[0]).name == "torchrun":
        return _console_script_python(command[0]), list(command[1:])
    if _is_python(command[0]) and len(command) >= 3 and command[1] == "-m" and command[2] in _TORCHRUN_MODULES:
        return command[0], list(command[3:])
    return None


def _console_script_python(script: str) -> str:
    """The interpreter a `torchrun` console script runs under: its `#!` line, else `python`."""
    found = shutil.which(script)
    if found:
        try:
            with open(found, "rb") as handle:
                first = handle.readline(4096).decode("utf-8", "replace").strip()
        except OSError:
            first = ""
        if first.startswith("#!"):
            words = first[2:].split()
            if words and _is_python(words[0]) and os.path.isfile(words[0]):
                return words[0]
    return "python"


def from_torchrun(command: list[str]) -> tuple[list[str], int, list[str]] | None:
    """A command that is itself torchrun on one node -> (one worker's `python SCRIPT ARGS` command, the
    number of ranks, the torchrun options that are not passed on). None when it is not torchrun.
    torchrun's own parser reads the options, so every spelling it accepts is understood."""
    found = _torchrun_args(command)
    if found is None:
        return None
    python, argv = found
    from torch.distributed.run import get_args_parser  # only for a torchrun command: torch is slow to import

    parser = get_args_parser()
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):  # argparse prints its usage before it exits
            args, unknown = parser.parse_known_args(argv)
    except SystemExit:
        last = (said.getvalue().strip().splitlines() or ["cannot read them"])[-1]
        raise LaunchError(f"the torchrun command's options: {last.split('error: ', 1)[-1]}") from None
    if unknown:
        raise LaunchError(f"the torchrun command has options torchrun does not know: {' '.join(unknown)}")
    nnodes = str(args.nnodes)
    if nnodes not in ("1", "1:1"):
        raise LaunchError(f"verify runs one node; the torchrun command asks for --nnodes {nnodes}")
    if args.no_python:
        raise LaunchError("verify instruments Python workers; the torchrun command has --no-python")
    try:
        nproc = int(args.nproc_per_node)
    except ValueError:
        raise LaunchError(f"the torchrun command's --nproc-per-node {args.nproc_per_node!r} is not a number of "
                          "ranks: give one, e.g. --nproc-per-node 2") from None
    worker = [python, "-m", args.training_script] if args.module else [python, args.training_script]
    defaults = vars(parser.parse_args([args.training_script]))
    dropped = [name.replace("_", "-") for name in _RENDEZVOUS_OPTIONS
               if name in vars(args) and vars(args)[name] != defaults.get(name)]
    return [*worker, *args.training_script_args], nproc, dropped


def rank_stderr_files(log_dir: Path) -> dict[int, Path]:
    """Local rank -> its stderr file (the latest attempt; torchrun restarts are off by default)."""
    found: dict[int, tuple[int, Path]] = {}
    for path in log_dir.rglob("stderr.log"):
        match = _RANK_LOG.search(str(path))
        if match:
            attempt, rank = int(match.group(1)), int(match.group(2))
            if rank not in found or attempt > found[rank][0]:
                found[rank] = (attempt, path)
    return {rank: path for rank, (_, path) in sorted(found.items())}


def _user_frame(file: str) -> bool:
    return not (file.startswith(_STABFIX_DIR) or "site-packages" in file or "dist-packages" in file
                or file.startswith("<") or file.startswith(os.path.dirname(os.__file__)))


def last_stack(text: str) -> list[dict[str, object]]:
    """The main thread's frames of the last faulthandler dump in `text`, most recent call last,
    stabfix's own frames left out. Each frame: file, line, function, user (not torch, a library or
    the standard library)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if _DUMP_HEAD.match(line.strip()):
            current = []
            blocks.append(current)
            if line.strip().startswith("Current thread"):
                current.append("main")
        elif current is not None:
            if _FRAME.match(line):
                current.append(line)
            elif line.strip():
                current = None
    if not blocks:
        return []
    # faulthandler prints all threads, the one that got the signal (the main thread) first
    last_main = max((i for i, block in enumerate(blocks) if block[:1] == ["main"]), default=len(blocks) - 1)
    frames = []
    for line in reversed([line for line in blocks[last_main] if line != "main"]):
        match = _FRAME.match(line)
        assert match is not None
        if match.group("file").startswith(_STABFIX_DIR):
            continue
        frames.append({"file": match.group("file"), "line": int(match.group("line")),
                       "function": match.group("func"), "user": _user_frame(match.group("file"))})
    return frames


def stack_text(frames: list[dict[str, object]]) -> str:
    """The frames as a traceback reads (most recent call last)."""
    return "\n".join(f'  File "{f["file"]}", line {f["line"]}, in {f["function"]}' for f in frames)


def where_stuck(frames: list[dict[str, object]]) -> str:
    """`train.py:57 in main, inside torch.distributed barrier`: the innermost line of the user's code
    and what it was waiting in."""
    user = [f for f in frames if f["user"]]
    if not user:
        return f"{frames[-1]['file']}:{frames[-1]['line']} in {frames[-1]['function']}" if frames else "unknown"
    mine = user[-1]
    text = f"{Path(str(mine['file'])).name}:{mine['line']} in {mine['function']}"
    inner = frames[-1]
    if inner is not mine:
        text += f", inside {_library_name(str(inner['file']))} {inner['function']}"
    return text


def _library_name(file: str) -> str:
    """`torch/distributed/distributed_c10d.py` -> `torch.distributed.distributed_c10d`."""
    parts = Path(file).with_suffix("").parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return ".".join(parts[parts.index(marker) + 1:])
    return Path(file).stem
