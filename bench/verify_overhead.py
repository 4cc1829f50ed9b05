"""Overhead of `stabfix verify`'s per-step instrumentation on a realistic CPU training step.

The step: a small causal transformer LM (2 layers, d=128, 4 heads, seq 64, batch 8, vocab 4096),
cross-entropy, AdamW; forward + backward + optimizer step. Bare and instrumented steps are
interleaved in blocks (ABBA order, so drift and machine load hit both sides equally), and the
instrumented side is exactly what the verify child runs per step (`Instrumentation.run_step`:
live-tensor dispatch tracker, forward hooks on every module, optimizer step hooks with gradient
norms, one host read-back). A third side runs the step under an empty TorchDispatchMode: the cost
of any per-op Python interception, which stabfix's exact live-tensor accounting cannot go below.
Prints medians and the ratios.

    python bench/verify_overhead.py [--rounds 12] [--block 5] [--vocab 4096] [--d 128] [--layers 2]
                                    [--seq 64] [--batch 8] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from stabfix.verify.instrument import Instrumentation  # noqa: E402


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
    parser.add_argument("--block", type=int, default=5, help="steps per side per round")
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--d", type=int, default=128, help="model width")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    model, opt, step = build(args.vocab, d=args.d, layers=args.layers, seq=args.seq, batch=args.batch)
    for _ in range(3):  # warm up: optimizer state, allocator, kernels
        step()
    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    for i in range(3):
        inst.run_step(i + 1, step, warmup=True)
    inst.remove()

    bare: list[float] = []
    instrumented: list[float] = []
    bare_cpu: list[float] = []
    instrumented_cpu: list[float] = []
    counter = [100]

    def run_bare() -> None:
        for _ in range(args.block):
            c0, t0 = time.process_time(), time.perf_counter()
            step()
            bare.append(time.perf_counter() - t0)
            bare_cpu.append(time.process_time() - c0)

    empty: list[float] = []
    empty_cpu: list[float] = []

    def run_empty() -> None:
        for _ in range(args.block):
            c0, t0 = time.process_time(), time.perf_counter()
            with EmptyMode():
                step()
            empty.append(time.perf_counter() - t0)
            empty_cpu.append(time.process_time() - c0)

    def run_instrumented() -> None:
        inst.install()
        for _ in range(args.block):
            counter[0] += 1
            c0, t0 = time.process_time(), time.perf_counter()
            inst.run_step(counter[0], step, warmup=False)
            instrumented.append(time.perf_counter() - t0)
            instrumented_cpu.append(time.process_time() - c0)
        inst.remove()

    sides = [run_bare, run_empty, run_instrumented]
    for r in range(args.rounds):
        for side in sides if r % 2 == 0 else sides[::-1]:
            side()

    ops = len(inst.tracker._kinds)
    b = statistics.median(bare) * 1e3
    i = statistics.median(instrumented) * 1e3
    params = sum(p.numel() for p in model.parameters())
    print(f"step: TinyLM {args.layers} layers d={args.d} seq={args.seq} batch={args.batch} vocab={args.vocab} ({params:,} params), AdamW, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"steps per side: {len(bare)} (interleaved in {args.rounds} rounds of {args.block}); {ops} distinct aten ops")
    print(f"bare step          median {b:8.2f} ms   min {min(bare) * 1e3:8.2f} ms")
    print(f"instrumented step  median {i:8.2f} ms   min {min(instrumented) * 1e3:8.2f} ms")
    print(f"overhead ratio (median instrumented / median bare): {i / b:.3f}  ({(i / b - 1) * 100:+.1f}%)")
    print(f"overhead ratio (min / min): {min(instrumented) / min(bare):.3f}")
    bc, ic, ec = statistics.median(bare_cpu), statistics.median(instrumented_cpu), statistics.median(empty_cpu)
    print(f"CPU time per step (all threads): bare {bc * 1e3:.2f} ms, instrumented {ic * 1e3:.2f} ms, "
          f"ratio {ic / bc:.3f} (less sensitive to other load on the machine)")
    e = statistics.median(empty) * 1e3
    print(f"floor: an empty TorchDispatchMode (no tracking at all): median {e:.2f} ms, ratio {e / b:.3f} "
          f"(CPU {ec / bc:.3f}); stabfix's own bookkeeping and probes: {i / e:.3f}x on top of it")


if __name__ == "__main__":
    main()
