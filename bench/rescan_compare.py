#!/usr/bin/env python
"""Re-scan checked-out repositories and compare with an earlier scan of each: what a rule change did
to findings on code the rules were not written against.

    python bench/rescan_compare.py REPORT.json=REPO_DIR [REPORT.json=REPO_DIR ...]

REPORT.json is an earlier `stabfix scan --no-cache --output-format json REPO_NAME` run from REPO_DIR's
parent (paths in it start with the repository's folder name). Prints per repository the finding counts
before and after and errors now, then every finding (code, path:line) that went away (-) or appeared
(+). Run it with the Python that has stabfix installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _keys(report: dict) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["code"]) for f in report["findings"]}


def main() -> None:
    pairs = [arg.split("=", 1) for arg in sys.argv[1:]]
    if not pairs or any(len(pair) != 2 for pair in pairs):
        sys.exit(__doc__)
    before_total = after_total = 0
    changes: list[str] = []
    for report_path, repo in pairs:
        folder = Path(repo)
        before = _keys(json.loads(Path(report_path).read_text()))
        run = subprocess.run(
            [sys.executable, "-m", "stabfix", "scan", "--no-cache", "--output-format", "json", folder.name],
            cwd=folder.parent, capture_output=True, text=True, check=False,
        )
        now = json.loads(run.stdout)
        after = _keys(now)
        before_total, after_total = before_total + len(before), after_total + len(after)
        print(f"{folder.name:28s} {len(before):4d} -> {len(after):4d}   errors now {len(now['errors'])}")
        changes += [f"  - {code} {path}:{line}" for path, line, code in sorted(before - after)]
        changes += [f"  + {code} {path}:{line}" for path, line, code in sorted(after - before)]
    print(f"{'total':28s} {before_total:4d} -> {after_total:4d}")
    print("\n".join(changes))


if __name__ == "__main__":
    main()
