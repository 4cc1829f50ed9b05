"""Per test file: tests run, wall, CPU and child-process CPU seconds from a bench/pytest_cpu_log.py log."""
import collections, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
per = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
for nodeid, when, wall, cpu, kids, worker, _ in rows:
    f = nodeid.split("::")[0]
    p = per[f]
    p[0] += when == "call"; p[1] += float(wall); p[2] += float(cpu); p[3] += float(kids)
tot = [sum(v[i] for v in per.values()) for i in range(4)]
print(f"{'file':45s} {'tests':>6s} {'wall':>8s} {'cpu':>8s} {'child':>8s} {'cpu+ch':>8s}")
for f, (n, w, c, k) in sorted(per.items(), key=lambda kv: -(kv[1][2] + kv[1][3]))[: int(sys.argv[2]) if len(sys.argv) > 2 else 40]:
    print(f"{f:45s} {n:6d} {w:8.1f} {c:8.1f} {k:8.1f} {c + k:8.1f}")
print(f"{'TOTAL':45s} {tot[0]:6d} {tot[1]:8.1f} {tot[2]:8.1f} {tot[3]:8.1f} {tot[2] + tot[3]:8.1f}")
