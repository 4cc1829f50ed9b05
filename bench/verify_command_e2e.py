"""`stabfix verify -- python train.py` against `stabfix verify --entry train:build_verify` end to end, on
verify_overhead.py's step (the TinyLM transformer, AdamW): the same step written once as a script's
training loop and once as a build_verify entry, in a temporary project.

Each round runs both CLIs (ABBA order over rounds) with `--steps` steps and `--json`; printed per mode:
the CLI's wall time (process start, torch import, setup, the steps, the report), the median step
time after warm-up and the peak memory the report gives (the two modes must agree on memory).

    python bench/verify_command_e2e.py [--rounds 4] [--steps 10] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TRAIN = '''
import sys
sys.path.insert(0, {bench!r})
from verify_overhead import build

VOCAB = 4096


def build_verify(device):
    model, opt, step = build(VOCAB)
    return model, opt, step


if __name__ == "__main__":
    model, opt, step = build(VOCAB)
    for _ in range(1000):
        step()
'''


def run(args: list[str], project: Path, env: dict[str, str]) -> tuple[float, dict]:
    out = project / "report.json"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stabfix", "verify", str(project), "--json", str(out), *args],
                          capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return wall, json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": str(args.threads), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "train.py").write_text(TRAIN.format(bench=str(REPO / "bench")))
        modes = {
            "entry": ["--steps", str(args.steps), "--entry", "train:build_verify"],
            "command": ["--steps", str(args.steps), "--", sys.executable, "train.py"],
        }
        results: dict[str, list[tuple[float, dict]]] = {m: [] for m in modes}
        for r in range(args.rounds):
            for mode in (list(modes) if r % 2 == 0 else list(modes)[::-1]):
                results[mode].append(run(modes[mode], project, env))
    print(f"{args.steps} steps, {args.rounds} rounds (ABBA), OMP_NUM_THREADS={args.threads}")
    print(f"{'mode':<8} {'CLI wall (median)':>18} {'step time median':>17} {'fastest step':>13} {'peak memory':>12} "
          f"{'exact steps':>12}")
    for mode, runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        step = statistics.median(rep["summary"]["step_time_median_ms"] for _, rep in runs)
        fastest = min(rep["summary"]["step_time_min_ms"] for _, rep in runs)
        peak = {rep["summary"]["peak_memory_bytes"] for _, rep in runs}
        exact = runs[0][1]["summary"]["exact_steps"]
        print(f"{mode:<8} {wall:15.2f} s {step:14.1f} ms {fastest:10.1f} ms {'/'.join(str(p) for p in sorted(peak)):>12} {str(exact):>12}")


if __name__ == "__main__":
    main()
