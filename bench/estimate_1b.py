"""`stabfix verify --estimate` on a ~1B-parameter causal LM (plain torch; and the same shape as a
Hugging Face Llama when transformers is installed) and on one fixture, side by side with the peer
torch-preflight and with the real CPU peak where a real run is affordable.

    python bench/estimate_1b.py [--no-peer] [--no-hf]

Prints a markdown report (the numbers that bench/README.md's estimate section quotes). Wall time and
max RSS are of the whole `stabfix verify --estimate` process tree; `import torch` + `torch._dynamo`
(which torch imports when the first optimizer is built) is measured alone as the floor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LM = REPO / "bench" / "estimate_lm"
PEER = Path("/work/tp-venv/bin/torch-preflight")
GIB = 1024**3


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, float, int]:
    """(exit code, stdout+stderr, wall seconds, max RSS bytes of the process tree) in a fresh process."""
    code = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True)\n"
        "w = time.perf_counter() - t\n"
        "r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
        "print(json.dumps([p.returncode, p.stdout + p.stderr, w, r]))\n"
    )
    full_env = {**os.environ, "COLUMNS": "110", "PYTHONHASHSEED": "0", **(env or {})}
    out = subprocess.run([sys.executable, "-c", code, str(cwd), *cmd], capture_output=True, text=True, env=full_env)
    rc, text, wall, rss = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, text, wall, rss


def stabfix(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[dict, float, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        rc, text, wall, rss = run([sys.executable, "-m", "stabfix", "verify", *args, "--json", str(out)], cwd, env)
        report = json.loads(out.read_text()) if out.exists() else {}
    return report, wall, rss, text


def gib(n: float | None) -> str:
    return "—" if n is None else f"{n / GIB:.2f} GiB"


def main() -> None:
    peer = PEER.exists() and "--no-peer" not in sys.argv
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    rc, _, floor_wall, floor_rss = run([sys.executable, "-c", "import torch, torch._dynamo"], REPO)
    print(f"floor: `import torch, torch._dynamo` {floor_wall:.1f} s, max RSS {floor_rss / 2**20:.0f} MiB\n")

    print("## ~1B causal LM (bench/estimate_lm/causal_lm.py: 1,055,991,808 params, fp32 AdamW, batch 4 x 2048)\n")
    rep, wall, rss, text = stabfix(["--estimate", "--gpu", "h100-80gb"], LM)
    est = rep.get("estimate") or {}
    print(f"stabfix: {est.get('label')} peak {gib(est.get('peak_bytes'))} (tensors {gib(est.get('tensor_peak_bytes'))}) "
          f"in {est.get('peak_phase')}; wall {wall:.1f} s (child {est.get('seconds')} s), max RSS {rss / 2**20:.0f} MiB "
          f"(child {int(est.get('child_max_rss_bytes') or 0) / 2**20:.0f} MiB)")
    print("breakdown: " + ", ".join(f"{k} {gib(v)}" for k, v in (est.get("breakdown") or {}).items()))
    if "--no-hf" not in sys.argv:
        rep, wall, rss, text = stabfix(["--estimate", "--estimate-entry", "hf_llama:build_verify", "--gpu", "h100-80gb"], LM)
        hf = rep.get("estimate")
        if hf:
            print(f"stabfix on transformers LlamaForCausalLM (same shape, sdpa): {hf['label']} peak {gib(hf['peak_bytes'])} "
                  f"(tensors {gib(hf['tensor_peak_bytes'])}); wall {wall:.1f} s, max RSS {rss / 2**20:.0f} MiB")
        else:
            print("stabfix on transformers LlamaForCausalLM: " + ((rep.get("error") or {}).get("message") or text[-400:]))
    if peer:
        rc, text, wall, rss = run([str(PEER), "estimate", "--model", "causal_lm:make_model", "--batch-size", "4",
                                   "--seq-len", "2048", "--dtype", "fp32", "--optimizer", "adamw", "--flash",
                                   "--gpu", "h100-80gb"], LM, {"PYTHONPATH": str(LM)})
        print(f"\ntorch-preflight estimate (wall {wall:.1f} s, max RSS {rss / 2**20:.0f} MiB):\n```")
        print("\n".join(line for line in text.splitlines() if "NumPy" not in line and "_conversion" not in line).strip())
        print("```")

    print("\n## the same code at a small size (SMALL=1), where a real CPU run is affordable\n")
    small = {"SMALL": "1"}
    real, *_ = stabfix([], LM, small)
    steps = real.get("steps") or [{}, {}]
    print(f"real CPU run (verify): step 1 peak {steps[0].get('peak_bytes')} bytes, step 2 peak "
          f"{steps[1].get('peak_bytes')} bytes")
    for kernels in ("cpu", "cuda"):
        cfg = _config(LM, kernels)
        rep, *_ = stabfix(["--estimate", "--config", str(cfg)], LM, small)
        e = rep.get("estimate") or {}
        print(f"estimate kernels={kernels}: tensor peak {e.get('tensor_peak_bytes')} bytes ({e.get('peak_phase')})")
        cfg.unlink()

    fixture = REPO / "fixtures" / "classic_pitfalls"
    print("\n## fixture classic_pitfalls (TinyLM: nn.TransformerEncoder, dropout 0.1, AdamW, batch 8 x 32)\n")
    real, *_ = stabfix([], fixture)
    steps = real.get("steps") or [{}, {}]
    print(f"real CPU run (verify): step 1 peak {steps[0].get('peak_bytes')} bytes, step 2 peak "
          f"{steps[1].get('peak_bytes')} bytes; run peak {real.get('summary', {}).get('peak_memory_bytes')} bytes "
          f"(the fixture's planted leak grows it over {len(steps)} steps)")
    for kernels in ("cpu", "cuda"):
        cfg = _config(fixture, kernels)
        try:
            rep, *_ = stabfix(["--estimate", "--config", str(cfg)], fixture)
        finally:
            cfg.unlink()
        e = rep.get("estimate") or {}
        print(f"estimate kernels={kernels}: tensor peak {e.get('tensor_peak_bytes')} bytes ({e.get('peak_phase')}), "
              f"with margin {e.get('peak_bytes')} bytes")
    if peer:
        rc, text, wall, rss = run([str(PEER), "estimate", "--model", "peer_factories:classic_pitfalls_tiny_lm",
                                   "--batch-size", "8", "--seq-len", "32", "--dtype", "fp32", "--optimizer", "adamw",
                                   "--gpu", "h100-80gb"], LM, {"PYTHONPATH": f"{LM}:{fixture}"})
        print("\ntorch-preflight estimate:\n```")
        print("\n".join(line for line in text.splitlines() if "NumPy" not in line and "_conversion" not in line).strip())
        print("```")


def _config(project: Path, kernels: str) -> Path:
    import yaml

    data = yaml.safe_load((project / "stabfix.yaml").read_text())
    data["verify"].setdefault("estimate", {})["kernels"] = kernels
    data["verify"]["estimate"].pop("gpu", None)
    fd, name = tempfile.mkstemp(suffix=".yaml", prefix="stabfix-", dir=project)
    os.close(fd)
    Path(name).write_text(yaml.safe_dump(data))
    return Path(name)


if __name__ == "__main__":
    main()
