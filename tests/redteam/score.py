"""Print the red-team score per rule: bad cases flagged and ok cases silent, with the failures listed.

Usage: python tests/redteam/score.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CODES, cases, judge, known_failures  # noqa: E402


def main(argv: list[str]) -> int:
    known = known_failures()
    rows = {code: {"bad": [0, 0], "ok": [0, 0]} for code in CODES}
    failures = []
    for case in cases():
        verdict = judge(case)
        cell = rows[case.code][case.kind]
        cell[1] += 1
        if verdict.passed:
            cell[0] += 1
        else:
            failures.append((case.key, verdict.detail, case.key in known))
    print(f"{'rule':<6}  {'bad flagged':>12}  {'ok silent':>10}")
    totals = {"bad": [0, 0], "ok": [0, 0]}
    for code in CODES:
        bad, ok = rows[code]["bad"], rows[code]["ok"]
        for kind in totals:
            totals[kind][0] += rows[code][kind][0]
            totals[kind][1] += rows[code][kind][1]
        print(f"{code:<6}  {bad[0]:>5}/{bad[1]:<6}  {ok[0]:>4}/{ok[1]:<5}")
    print(f"{'total':<6}  {totals['bad'][0]:>5}/{totals['bad'][1]:<6}  {totals['ok'][0]:>4}/{totals['ok'][1]:<5}")
    if failures:
        print("\nfailing cases:")
        for key, detail, listed in failures:
            print(f"  {key}: {detail}{'' if listed else '   <-- NOT in known_failures.yaml'}")
    stale = sorted(set(known) - {key for key, _, _ in failures})
    if stale:
        print("\nlisted in known_failures.yaml but passing now:")
        for key in stale:
            print(f"  {key}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
