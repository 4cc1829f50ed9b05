"""Overhead of `stabfix verify`'s instrumentation on a realistic CPU training step, over a whole run.

The step: a small causal transformer LM (2 layers, d=128, 4 heads, seq 64, batch 8, vocab 4096),
cross-entropy, AdamW; forward + backward + optimizer step. One round runs each side for a whole
verify run of `--steps` steps (default 10, with `--warmup` 2, verify's defaults), the sides in ABBA
order across rounds so that drift and machine load hit all of them equally:

- bare: the step, `--steps` times;
- verify: what the verify child runs, step by step (`Instrumentation.run_step`), exact per-op
  accounting on the steps `exact_schedule` picks (verify.exact_steps: auto) and sampled steps on the
  others, including the sampled steps' boundary count; module output checks as they come on the first
  step and deferred after it, as the child runs them;
- all exact: every step exact (verify.exact_steps: all; what verify ran on every step before);
- empty mode: the step under an empty TorchDispatchMode, the floor of any per-op Python
  interception (what an exact step cannot go below);
- command: what `stabfix verify -- python train.py` runs in the training process (`step_hooks`): the
  same loop with the global optimizer hooks, the backward wrapper and the event file; the models are
  found (and the tensors that exist counted) at the run's first optimizer step, as in a real run, and
  the step before the last is exact too (`--no-command` skips it).

The headline is the run's total instrumented step time over the bare run's total: the ratio of the
medians over the rounds, and the median over the rounds of each round's own ratio ("paired": both
runs of a round are back to back, so drift in the machine's speed cancels). The steps here are all warm (the bench warms the model up first), unlike a real run's
first step.

Page faults: glibc's malloc hands large CPU tensors back to the kernel and asks again (mmap, heap
trimming, a threshold that moves with the history), so a side's run total can carry thousands of
first-touch page faults more or fewer than the other side's for reasons that have nothing to do with
the instrumentation (20,000-66,000 minor faults per 10-step run were seen on the default shape, about
10% of the step time). The minor faults per run are printed; `--stable-malloc` re-runs the bench
with GLIBC_TUNABLES that keep freed memory in the heap (no faults after the warm-up), which measures
the instrumentation's own cost with far less noise. Both are worth reporting: the default is what a
user's run sees.

    python bench/verify_overhead.py [--rounds 12] [--steps 10] [--warmup 2] [--vocab 4096] [--d 128]
                                    [--layers 2] [--seq 64] [--batch 8] [--threads N] [--no-all-exact]
                                    [--stable-malloc] [--no-command]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from stabfix.verify.event_files import EventWriter  # noqa: E402
from stabfix.verify.instrument import Instrumentation, exact_schedule  # noqa: E402
from stabfix.verify.step_hooks import CommandSteps  # noqa: E402


# never give memory back to the kernel, never serve an allocation with its own mmap (4 GiB thresholds)
STABLE_MALLOC = "glibc.malloc.trim_threshold=4294967296:glibc.malloc.mmap_threshold=4294967296"


class EmptyMode(TorchDispatchMode):
    """A dispatch mode that does nothing: the floor that any per-op Python tracking pays."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func._op(*args, **kwargs) if kwargs else func._op(*args)


class TinyLM(nn.Module):
    def __init__(self, vocab: int, d: int, layers: int, heads: int, seq: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.emb(ids) + self.pos
        return self.head(self.norm(self.blocks(h, mask=self.mask, is_causal=True)))


def build(vocab: int, d: int = 128, layers: int = 2, seq: int = 64, batch: int = 8):
    torch.manual_seed(0)
    model = TinyLM(vocab, d, layers, 4, seq)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = torch.randint(0, vocab, (16, batch, seq + 1))
    state = {"i": 0}

    def step() -> torch.Tensor:
        batch_ids = data[state["i"] % len(data)]
        state["i"] += 1
        opt.zero_grad(set_to_none=True)
        logits = model(batch_ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), batch_ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--steps", type=int, default=10, help="steps per verify run (verify.steps)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up steps of the run (verify.warmup)")
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--d", type=int, default=128, help="model width")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch default)")
    parser.add_argument("--no-all-exact", action="store_true", help="skip the all-exact and empty-mode sides")
    parser.add_argument("--no-command", action="store_true", help="skip the `verify -- COMMAND` side")
    parser.add_argument("--stable-malloc", action="store_true",
                        help="re-run with GLIBC_TUNABLES that keep freed memory in the heap (no page-fault noise)")
    args = parser.parse_args()
    if args.stable_malloc and os.environ.get("GLIBC_TUNABLES") != STABLE_MALLOC:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "GLIBC_TUNABLES": STABLE_MALLOC})
    if args.threads:
        torch.set_num_threads(args.threads)

    model, opt, step = build(args.vocab, d=args.d, layers=args.layers, seq=args.seq, batch=args.batch)
    for _ in range(3):  # warm up: optimizer state, allocator, kernels
        step()
    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    for i in range(3):
        inst.run_step(i + 1, step, warmup=True, exact=i != 1)
    inst.remove()

    schedule = exact_schedule(args.steps, args.warmup, "auto")
    counter = [100]
    # side -> per-round totals (wall, CPU) and per-step times by kind
    totals: dict[str, list[tuple[float, float]]] = {}
    per_step: dict[str, list[float]] = {"bare": [], "exact": [], "sampled": [], "command": []}
    events = tempfile.mkdtemp(prefix="stabfix-bench-events-")

    faults: dict[str, list[int]] = {}

    def timed(name: str, body) -> None:
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0, t0 = time.process_time(), time.perf_counter()
        body()
        totals.setdefault(name, []).append((time.perf_counter() - t0, time.process_time() - c0))
        faults.setdefault(name, []).append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)

    def bare_run() -> None:
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step()
            per_step["bare"].append(time.perf_counter() - t0)

    def empty_run() -> None:
        for _ in range(args.steps):
            with EmptyMode():
                step()

    def verify_run(exact_all: bool) -> None:
        inst.install()
        for pos in range(1, args.steps + 1):
            counter[0] += 1
            exact = exact_all or pos in schedule
            t0 = time.perf_counter()
            inst.run_step(counter[0], step, warmup=pos <= args.warmup, exact=exact, defer_checks=pos > 1)
            if not exact_all:
                per_step["exact" if exact else "sampled"].append(time.perf_counter() - t0)
        inst.remove()

    def command_run() -> None:
        # one more step than the run, so that the session never ends the process
        session = CommandSteps(EventWriter(events), {"steps": args.steps + 1, "warmup": args.warmup,
                                                     "exact_steps": "auto"})
        session.install()
        for pos in range(1, args.steps + 1):
            t0 = time.perf_counter()
            step()
            kind = "command first" if pos == 1 else "command exact" if pos in session.exact else "command"
            per_step.setdefault(kind, []).append(time.perf_counter() - t0)
        session.remove()

    sides = [("bare", bare_run), ("verify", lambda: verify_run(False))]
    if not args.no_command:
        sides.append(("command", command_run))
    if not args.no_all_exact:
        sides += [("all exact", lambda: verify_run(True)), ("empty mode", empty_run)]
    for r in range(args.rounds):
        for name, body in sides if r % 2 == 0 else sides[::-1]:
            timed(name, lambda: body())

    params = sum(p.numel() for p in model.parameters())
    print(f"step: TinyLM {args.layers} layers d={args.d} seq={args.seq} batch={args.batch} vocab={args.vocab} "
          f"({params:,} params), AdamW, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"run: {args.steps} steps, warm-up {args.warmup}; exact steps {sorted(schedule)} "
          f"({len(schedule)} of {args.steps}); {args.rounds} rounds, sides interleaved ABBA; malloc: "
          + ("stable (GLIBC_TUNABLES)" if os.environ.get("GLIBC_TUNABLES") == STABLE_MALLOC else "default"))
    bare_wall = statistics.median(t[0] for t in totals["bare"])
    bare_cpu = statistics.median(t[1] for t in totals["bare"])
    print(f"{'side':<12} {'run total (median)':>19} {'ratio':>7} {'CPU ratio':>10} {'paired ratio':>13} "
          f"{'minor faults/run':>17}")
    for name, _ in sides:
        wall = statistics.median(t[0] for t in totals[name])
        cpu = statistics.median(t[1] for t in totals[name])
        # each round's total over the same round's bare total (the two ran back to back), median over
        # rounds: the machine's slow drift cancels out of it, unlike a ratio of two medians
        paired = statistics.median(t[0] / b[0] for t, b in zip(totals[name], totals["bare"]))
        print(f"{name:<12} {wall * 1e3:16.1f} ms {wall / bare_wall:7.3f} {cpu / bare_cpu:10.3f} {paired:13.3f} "
              f"{statistics.median(faults[name]):17,.0f}")
    b = statistics.median(per_step["bare"])
    print(f"per step (median): bare {b * 1e3:.2f} ms, exact {statistics.median(per_step['exact']) * 1e3:.2f} ms "
          f"({statistics.median(per_step['exact']) / b:.3f}), sampled "
          + (f"{statistics.median(per_step['sampled']) * 1e3:.2f} ms ({statistics.median(per_step['sampled']) / b:.3f})"
             if per_step["sampled"] else "-")
          + "".join(f"; {kind} {statistics.median(per_step[kind]) * 1e3:.2f} ms ({statistics.median(per_step[kind]) / b:.3f})"
                    for kind in ("command first", "command exact", "command") if per_step.get(kind)))


if __name__ == "__main__":
    main()
