"""`verify --estimate` vs the real CPU run of every fixture (and the verify test cases' healthy step).

    python bench/estimate_fixtures.py

For each project: verify's real CPU step 1 / step 2 peaks (its live-tensor tracker, with its probes
on), and the estimate's cold / steady peaks with kernels as the CPU runs them (`kernels: cpu`) and
as CUDA would (the default). Prints a markdown table.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimate_1b import REPO, _config, stabfix  # noqa: E402

PROJECTS = ["tests/verify_cases/healthy"] + [f"fixtures/{p.name}" for p in sorted((REPO / "fixtures").iterdir())
                                              if (p / "stabfix.yaml").is_file()]


def main() -> None:
    print("| project | verify real CPU step 1 / step 2 peak | estimate kernels=cpu cold / steady | Δ steady | "
          "estimate kernels=cuda cold / steady |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for rel in PROJECTS:
        project = REPO / rel
        real, *_ = stabfix([], project)
        steps = real.get("steps") or []
        r = [s.get("peak_bytes") for s in steps[:2]] if len(steps) >= 2 else [None, None]
        cells = []
        for kernels in ("cpu", "cuda"):
            cfg = _config(project, kernels)
            try:
                rep, *_ = stabfix(["--estimate", "--config", str(cfg)], project)
            finally:
                cfg.unlink()
            e = rep.get("estimate") or {}
            cold = e.get("cold_peak_bytes")
            cells.append((e, cold))
        def pair(e: dict, cold) -> str:
            return f"{cold if cold is not None else '?'} / {e.get('steady_peak_bytes', '?')}"
        e_cpu = cells[0][0]
        delta = "?"
        if r[1] and e_cpu.get("steady_peak_bytes"):
            delta = f"{(e_cpu['steady_peak_bytes'] - r[1]) / r[1]:+.2%}"
        print(f"| {rel} | {r[0]} / {r[1]} | {pair(*cells[0])} | {delta} | {pair(*cells[1])} |", flush=True)


if __name__ == "__main__":
    main()
