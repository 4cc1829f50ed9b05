#!/usr/bin/env python
"""Does `stabfix scan` stay linear on one big file? Scan time next to a bare libcst parse, by file size.

    python bench/big_file.py [--lines 1000,2000,4000,8000,16000,50000] [--scripts 1000,2000,4000]
                             [--terms 20000] [--runs 1] [--collector scan|python] [--scope run|engine]
    python bench/big_file.py --write-only DIR      # just write the generated files, for profiling

Run it with the Python that has stabfix installed (the repo's .venv). Each size is one generated
training file (`generate_training_file`): many units of training code, each a model class, a trainer
with a step, clipping, AMP, evaluation, accumulation, checkpoints, caches, generation and a plain
training loop, so every rule's tokens are present and every model part does work. Then scripts
(`generate_script`): notebook cells exported to one module, rebinding the same names at module level
in every cell. Plus two shapes that stress a single statement: one `x = a0 + a1 + ...` expression
with --terms terms, and a call chain of --terms/10 links.

For each file it measures, in one fresh subprocess per file (so nothing is cached between sizes):
  * parse  - `libcst.parse_module` of the text (skipped for code CPython's own parser refuses as
             nested too deeply: libcst takes minutes there, then may crash the process)
  * scan   - what `stabfix scan FILE --no-cache` does with the file, every rule selected, without process
             start-up and output: `scan_runner.run_tasks` of the one file with its project, so reading it,
             its own parse, the analysis and the cyclic collector's work for the file are all counted
             (`--scope engine`: `stabfix.engine.analyse_text` alone, as this benchmark timed before
             session 28, which left out the collection `scan_runner` makes after the file)
and prints lines, both CPU times, scan/parse and what the scan reported (findings, or the error line
`stabfix scan` prints). Linear growth shows as a flat ratio and a per-line scan time that does not grow
with size. The interpreter's recursion limit is left as the CLI has it, and so is its cyclic collector:
`stabfix scan` analyses its files under `scan_runner`'s collector thresholds, so both the parse and the
scan are timed under them (`--collector python`: Python's defaults, as this benchmark did before session 25;
with them a collection walks the file's whole live tree every few thousand allocations, a fifth of the scan).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

HEADER = '''\
"""A generated training module: many models, trainers and loops in one file."""

from __future__ import annotations

import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.utils.checkpoint import checkpoint

CACHE = {}
EPS = 1e-8
'''

# One unit of training code; {i} makes every global name unique, as in a real big module.
UNIT = '''

class Block{i}(nn.Module):
    def __init__(self, width: int = 32, depth: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 10)
        self.rnn = nn.GRU(width, width, batch_first=True)

    def forward(self, x, hidden=None):
        for layer in self.layers:
            x = x + F.gelu(layer(self.norm(x)))
        out, hidden = self.rnn(x, hidden)
        logits = self.head(out)
        scale = x.std() + 1e-8
        return F.softmax(logits / scale, dim=-1), hidden


class Trainer{i}:
    def __init__(self, device: str = "cuda", lr: float = 3e-4) -> None:
        self.device = device
        self.model = Block{i}().cuda()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, eps=1e-8)
        self.scaler = GradScaler()
        self.running_loss = 0.0
        self.history = []
        self.step_count = 0
        self.hidden = None
        self.ema = [torch.zeros_like(p) for p in self.model.parameters()]

    def train_step(self, batch):
        self.model.train()
        inputs, targets = batch
        inputs = inputs.cuda()
        targets = targets.cuda()
        with autocast(dtype=torch.float16):
            probs, self.hidden = self.model(inputs, self.hidden)
            loss = F.cross_entropy(probs.flatten(0, 1), targets.flatten())
        self.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        for avg, p in zip(self.ema, self.model.parameters()):
            avg.mul_(0.99).add_(p.detach(), alpha=0.01)
        self.running_loss += loss
        self.history.append(loss)
        self.step_count += 1
        if self.step_count % 100 == 0:
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
            print("step", self.step_count, loss.item(), float(self.running_loss))
        if torch.isnan(loss).any().item():
            raise RuntimeError("nan loss")
        return loss.detach()

    def evaluate(self, loader):
        self.model.eval()
        total = 0.0
        correct = 0
        for inputs, targets in loader:
            probs, _ = self.model(inputs.cuda())
            total += F.nll_loss(torch.log(probs).flatten(0, 1), targets.cuda().flatten())
            correct += (probs.argmax(-1) == targets.cuda()).sum().item()
        self.model.train()
        return total / len(loader), correct

    def save(self, path):
        torch.save({{"model": self.model.state_dict(), "opt": self.optimizer.state_dict()}}, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["opt"])


def accumulate_{i}(model, loader, steps: int = 4, lr: float = 1e-3):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    grads = [torch.zeros_like(p) for p in model.parameters()]
    for index, (inputs, targets) in enumerate(loader):
        outputs = model(inputs)
        loss = criterion(outputs, targets.detach())
        loss.backward()
        for buffer, p in zip(grads, model.parameters()):
            buffer += p.grad
        if index % steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return grads


def train_loop_{i}(model, loader, epochs: int = 2):
    torch.autograd.set_detect_anomaly(True)
    losses = []
    hidden = None
    for epoch in range(epochs):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step, (inputs, targets) in enumerate(loader):
            optimizer.zero_grad()
            out, hidden = model(inputs, hidden)
            logp = torch.log_softmax(out, dim=-1)
            picked = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            loss = -(picked / (out.norm() + 1e-9)).mean()
            target = out.detach().requires_grad_()
            loss = loss + F.mse_loss(out, target)
            loss.backward()
            optimizer.step()
            losses.append(loss)
            CACHE[step] = out
            if step % 10 == 0:
                tokens = model.generate(inputs, max_new_tokens=16)
                print(epoch, step, loss.item(), tokens.tolist())
    return sum(l.item() for l in losses)


def checkpointed_{i}(model, x):
    def run(t):
        model.calls = getattr(model, "calls", 0) + 1
        return model(t)[0]
    return checkpoint(run, x, use_reentrant=False)


def finetune_{i}(base, adapter, loader):
    for p in base.parameters():
        p.requires_grad = True
    optimizer = torch.optim.AdamW(list(base.parameters()) + list(adapter.parameters()), lr=1e-4)
    for inputs, targets in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = adapter(base(inputs))
        loss = F.kl_div(logits.log_softmax(-1), targets, reduction="batchmean")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        base.eval()
        with torch.no_grad():
            reference = base(inputs)
        base.train()
        weight = torch.load(os.path.join("ckpt", f"adapter_{{len(reference)}}.pt"))
        adapter.load_state_dict(weight)
'''


# One notebook cell exported to a script: module-level code that rebinds the same names in every cell.
CELL = '''
# cell {i}
model = nn.Linear(32, 10).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
total = 0.0
losses = []
for step, (inputs, targets) in enumerate(loader):
    optimizer.zero_grad()
    out = model(inputs.cuda())
    loss = F.cross_entropy(out, targets.cuda())
    loss.backward()
    optimizer.step()
    total += loss
    losses.append(loss)
    if step % 10 == 0:
        print(step, loss.item())
model.eval()
with torch.no_grad():
    acc = sum((model(x.cuda()).argmax(-1) == y.cuda()).float().mean().item() for x, y in loader)
state = torch.load("cell_{i}.pt")
model.load_state_dict(state)
'''


def generate_script(lines: int) -> str:
    """A notebook exported to a script: as many cells as fit in `lines`, all at module level."""
    cells = max(1, round((lines - HEADER.count("\n")) / CELL.count("\n")))
    return HEADER + "loader = []\n" + "".join(CELL.format(i=index) for index in range(cells))


def generate_training_file(lines: int) -> str:
    """A training module of about `lines` lines: the header and as many units as fit."""
    unit_lines = UNIT.count("\n")
    units = max(1, round((lines - HEADER.count("\n")) / unit_lines))
    return HEADER + "".join(UNIT.format(i=index) for index in range(units))


def generate_long_expression(terms: int) -> str:
    """One assignment summing `terms` names: a single statement libcst parses into a deep BinaryOperation."""
    names = " + ".join(f"a{index}" for index in range(terms))
    return HEADER + f"\n\ndef total(loss):\n    x = {names}\n    loss.backward()\n    return x\n"


def generate_call_chain(links: int) -> str:
    """One statement of `links` chained method calls (a builder-style configuration)."""
    chain = "".join(f".step{index}(loss)" for index in range(links))
    return HEADER + f"\n\ndef build(model, loss):\n    loss.backward()\n    return model{chain}\n"


MEASURE_SCRIPT = textwrap.dedent(
    """
    import ast, gc, json, sys, time
    import libcst
    if sys.argv[2] == "scan":
        try:
            from stabfix.scan_runner import _COLLECTOR_THRESHOLDS  # what `stabfix scan` analyses files under
        except ImportError:
            _COLLECTOR_THRESHOLDS = gc.get_threshold()  # a stabfix older than the setting
        gc.set_threshold(*_COLLECTOR_THRESHOLDS)
    from stabfix.catalog import load_catalog
    from stabfix.checkers import checker_classes
    from stabfix.engine import AnalysisError, analyse_text
    text = open(sys.argv[1], encoding="utf-8").read()
    specs = load_catalog()
    available = checker_classes()
    classes = [available[code] for code in sorted(specs) if code in available]
    try:
        ast.parse(text)
        deep = False
    except RecursionError:
        deep = True  # code CPython cannot build: libcst may take minutes on it (then crash), so not timed
    parse = None
    if not deep:
        t0 = time.process_time()
        libcst.parse_module(text)
        parse = time.process_time() - t0
    t0 = time.process_time()
    if sys.argv[3] == "run":  # the file as `stabfix scan FILE --no-cache` runs it, its collections included
        import os
        from stabfix.project import Project, ProjectIndex
        from stabfix.scan_runner import Task, run_tasks
        project = Project(ProjectIndex([sys.argv[1]], [os.path.dirname(sys.argv[1])]))
        task = Task(sys.argv[1], sys.argv[1], tuple(cls.code for cls in classes), "scan", False)
        result = run_tasks([task], 1, None, project=project).results[0]
        outcome = f"error: {result.error.message}" if result.error else f"{len(result.findings)} findings"
    else:
        try:  # what `stabfix scan` reports for the file (scan_runner turns a RecursionError into this line)
            outcome = f"{len(analyse_text(text, sys.argv[1], classes, specs).findings)} findings"
        except RecursionError:
            outcome = "error: code nested too deeply to analyse"
        except AnalysisError as exc:
            outcome = f"error: {exc}"
    scan = time.process_time() - t0
    print(json.dumps({"parse": parse, "scan": scan, "outcome": outcome}))
    """
)


def measure(path: Path, timeout: float, collector: str = "scan", scope: str = "run") -> dict:
    try:
        done = subprocess.run(
            # `-P`: `python -c` would put its working folder (this repository) ahead of PYTHONPATH, and a
            # run with another tree on PYTHONPATH would time this one's stabfix without a word
            [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-c", MEASURE_SCRIPT, str(path), collector, scope],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if done.returncode != 0:
        raise SystemExit(f"measuring {path} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def cases(sizes: list[int], terms: int, scripts: list[int]) -> list[tuple[str, str]]:
    built = [(f"training {size} lines", generate_training_file(size)) for size in sizes]
    built += [(f"script {size} lines", generate_script(size)) for size in scripts]
    if terms:
        built.append((f"{terms}-term sum", generate_long_expression(terms)))
        built.append((f"{terms // 50}-link call chain", generate_call_chain(terms // 50)))
    return built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", default="1000,2000,4000,8000,16000,50000", help="comma-separated file sizes")
    parser.add_argument("--scripts", default="1000,2000,4000", help="sizes of module-level scripts (empty: skip)")
    parser.add_argument("--terms", type=int, default=20000, help="terms of the long expression (0: skip)")
    parser.add_argument("--runs", type=int, default=1, help="measure each file N times, keep the fastest scan")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds before a file counts as not finishing")
    parser.add_argument("--write-only", type=Path, help="write the generated files to this folder and stop")
    parser.add_argument("--collector", choices=("scan", "python"), default="scan",
                        help="cyclic collector thresholds: those `stabfix scan` sets (default), or Python's own")
    parser.add_argument("--scope", choices=("run", "engine"), default="run",
                        help="what `scan` times: the file's run as the CLI makes it (default), or the analysis alone")
    args = parser.parse_args()
    sizes = [int(size) for size in args.lines.split(",") if size]
    built = cases(sizes, args.terms, [int(size) for size in args.scripts.split(",") if size])
    if args.write_only:
        args.write_only.mkdir(parents=True, exist_ok=True)
        for label, text in built:
            (args.write_only / (label.replace(" ", "_") + ".py")).write_text(text, encoding="utf-8")
        return 0
    print(f"{'file':<28}{'lines':>8}{'parse s':>10}{'scan s':>10}{'scan/parse':>12}{'scan ms/kline':>15}  outcome")
    with tempfile.TemporaryDirectory() as folder:
        for label, text in built:
            path = Path(folder) / "big.py"
            path.write_text(text, encoding="utf-8")
            line_count = text.count("\n")
            runs = [measure(path, args.timeout, args.collector, args.scope) for _ in range(args.runs)]
            if any("timeout" in run for run in runs):
                print(f"{label:<28}{line_count:>8}  did not finish in {args.timeout:.0f} s")
                continue
            best = min(runs, key=lambda run: run["scan"])
            parse = f"{best['parse']:>10.2f}" if best["parse"] is not None else f"{'skipped':>10}"
            ratio = f"{best['scan'] / best['parse']:>12.2f}" if best["parse"] else f"{'-':>12}"
            print(
                f"{label:<28}{line_count:>8}{parse}{best['scan']:>10.2f}{ratio}"
                f"{1000 * best['scan'] / (line_count / 1000):>15.0f}  {best['outcome']}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
