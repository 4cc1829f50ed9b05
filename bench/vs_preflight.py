#!/usr/bin/env python
"""stabfix vs torch-preflight, rule by rule, on the cases both claim to judge.

    python bench/vs_preflight.py --tp /path/to/torch-preflight SF410 SF404
    python bench/vs_preflight.py --tp ... SF410 --real bench/.cache/real   # also count findings on real code

For each stabfix rule named, with the torch-preflight rules that check the same thing (table below),
it writes every YAML example (bad and near miss) and every red-team case (`tests/redteam/<CODE>/`)
to a temporary folder, one file each, runs both tools on it and prints, per rule:
bad cases found (recall) and near misses/ok cases reported (false alarms). With `--real`, it also
scans that folder with both tools and prints the number of findings of each and the files only one
of them reports, to be judged by hand.

torch-preflight is installed in its own virtual environment (`pip install torch-preflight==0.5.0`);
pass its executable with `--tp`. The stabfix used is the one of the running Python.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from stabfix.catalog import load_catalog  # noqa: E402

# stabfix rule -> the torch-preflight 0.5.0 rules that report the same mistake
PEERS = {
    "SF103": ("TG001",),
    "SF106": ("TG002",),
    "SF202": ("TG007",),
    "SF404": ("TG003",),
    "SF407": ("TG011",),
    "SF410": ("TG005", "TG006"),
    "SF411": ("TG014",),
    "SF501": ("TG012",),
}


def cases(code: str) -> list[tuple[str, str, str]]:
    """(kind, name, source) for every YAML example and red-team case of a rule; kind is bad or ok."""
    spec = load_catalog()[code]
    found = [("bad", f"yaml:{e.name}", e.code) for e in spec.bad]
    found += [("ok", f"yaml:{e.name}", e.code) for e in (*spec.near_misses, *spec.good)]
    folder = REPO / "tests" / "redteam" / code
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else ():
        found.append(("bad" if path.name.startswith("bad_") else "ok", f"redteam:{path.name}", path.read_text()))
    return found


def stabfix_files(folder: Path, code: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "stabfix", "scan", "--no-cache", "--select", code, "--output-format", "json", "."],
        cwd=folder, capture_output=True, text=True,
    )
    return {Path(f["path"]).name for f in json.loads(result.stdout)["findings"]}


def preflight_files(tp: str, folder: Path, codes: tuple[str, ...]) -> set[str]:
    result = subprocess.run(
        [tp, "check", "-f", "json", "--select", ",".join(codes), "."], cwd=folder, capture_output=True, text=True
    )
    return {Path(d["path"]).name for d in json.loads(result.stdout)["diagnostics"]}


def compare(tp: str, code: str) -> dict:
    peers = PEERS[code]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "stabfix.yaml").write_text("{}\n")
        kinds = {}
        for index, (kind, name, source) in enumerate(cases(code)):
            file = f"case_{index:03d}.py"
            (folder / file).write_text(source)
            kinds[file] = (kind, name)
        ours, theirs = stabfix_files(folder, code), preflight_files(tp, folder, peers)
    row: dict = defaultdict(int)
    only = {"stabfix": [], "torch-preflight": []}
    for file, (kind, name) in kinds.items():
        row[f"{kind}_total"] += 1
        row[f"{kind}_stabfix"] += file in ours
        row[f"{kind}_preflight"] += file in theirs
        if (file in ours) != (file in theirs):
            only["stabfix" if file in ours else "torch-preflight"].append(f"{kind} {name}")
    return {"code": code, "peers": peers, **row, "only": only}


def real(tp: str, code: str, folder: Path) -> dict:
    ours = subprocess.run(
        [sys.executable, "-m", "stabfix", "scan", "--no-cache", "--select", code, "--output-format", "json", "."],
        cwd=folder, capture_output=True, text=True,
    )
    theirs = subprocess.run(
        [tp, "check", "-f", "json", "--select", ",".join(PEERS[code]), "."], cwd=folder, capture_output=True, text=True
    )
    a = [(f["path"], f["line"]) for f in json.loads(ours.stdout)["findings"]]
    b = [(d["path"], d["line"]) for d in json.loads(theirs.stdout)["diagnostics"]]
    return {"stabfix": sorted(a), "torch-preflight": sorted(b)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("codes", nargs="+", choices=sorted(PEERS))
    parser.add_argument("--tp", required=True, help="the torch-preflight executable")
    parser.add_argument("--real", type=Path, help="also scan this folder of real code with both")
    args = parser.parse_args()
    print("| rule | peer rules | bad found: stabfix | bad found: torch-preflight | false alarms: stabfix | false alarms: torch-preflight |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    details = []
    for code in args.codes:
        row = compare(args.tp, code)
        details.append(row)
        print(
            f"| {code} | {', '.join(row['peers'])} | {row['bad_stabfix']}/{row['bad_total']} | "
            f"{row['bad_preflight']}/{row['bad_total']} | {row['ok_stabfix']}/{row['ok_total']} | "
            f"{row['ok_preflight']}/{row['ok_total']} |"
        )
    for row in details:
        for tool, names in row["only"].items():
            for name in names:
                print(f"  {row['code']} only {tool}: {name}")
    if args.real:
        for code in args.codes:
            found = real(args.tp, code, args.real)
            print(f"\nreal code {args.real}: {code} stabfix {len(found['stabfix'])}, {'/'.join(PEERS[code])} torch-preflight {len(found['torch-preflight'])}")
            for tool, items in found.items():
                for path, line in items:
                    print(f"  {tool}: {path}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
