"""Recall of each rule on instances mined from public repositories (bench/mined/<CODE>.yaml).

Every entry of a bench/mined/<CODE>.yaml names a real instance (repo, commit, path, line) and the
paraphrased case written from it (`case:`, a file or a folder under tests/redteam/<CODE>/ whose
reported line carries `# expect: <CODE>`). This script runs `stabfix scan --select <CODE>` on each
case and counts it found when a finding of the rule lands on a marked line. With `--repos DIR`
it also scans the real file (plus the entry's `also:` files, for shapes that span files) at
DIR/<owner>/<name>/<path> or DIR/<owner>+<name>/<path>, and counts it found when a finding lands
on the recorded `line:` (or one of `accept_lines:`).

Usage:
    python bench/mined_recall.py [--rules SF4] [--repos DIR] [--stabfix CHECKOUT] [--verbose]

`--stabfix CHECKOUT` measures the stabfix of another checkout (e.g. /work/main) instead of this one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MINED = ROOT / "bench" / "mined"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)")


def marked_lines(path: Path, code: str) -> set[int]:
    lines = set()
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(text)
        if match and code in {part.strip() for part in match.group(1).split(",")}:
            lines.add(number)
    return lines


def scan(paths: list[Path], code: str, cwd: Path, checkout: Path) -> dict[Path, set[int]]:
    """Lines on which `code` is reported, per resolved file."""
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONHASHSEED="0")
    command = [sys.executable, "-m", "stabfix", "scan", "--select", code, "--output-format", "json",
               "--no-cache", "--exit-zero", "-q", "-j", "1", *[str(path) for path in paths]]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"stabfix could not scan {paths}: {result.stderr.strip().splitlines()[-1:]}")
    found: dict[Path, set[int]] = {}
    for finding in json.loads(result.stdout)["findings"]:
        if finding["code"] == code:
            found.setdefault((cwd / finding["path"]).resolve(), set()).add(finding["line"])
    return found


def case_found(case: Path, code: str, checkout: Path) -> bool:
    files = sorted(case.rglob("*.py")) if case.is_dir() else [case]
    reported = scan([case], code, case if case.is_dir() else case.parent, checkout)
    return any(marked_lines(file, code) & reported.get(file.resolve(), set()) for file in files)


def real_file_found(entry: dict, code: str, repos: Path, checkout: Path) -> bool | None:
    if not entry.get("path"):
        return None  # the code index gave the file's text but no repository path (see `source_id`)
    owner, name = entry["repo"].split("/")
    for root in (repos / owner / name, repos / f"{owner}+{name}"):
        target = root / entry["path"]
        if target.is_file():
            others = [root / extra for extra in entry.get("also", []) if (root / extra).is_file()]
            reported = scan([target, *others], code, root, checkout)
            accepted = {entry["line"], *entry.get("accept_lines", [])}
            return bool(accepted & reported.get(target.resolve(), set()))
    return None  # the repository is not under DIR


def load_entries(prefix: str) -> dict[str, list[dict]]:
    entries = {}
    for path in sorted(MINED.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        code = data.get("rule", path.stem)
        if code.startswith(prefix):
            entries[code] = data.get("instances") or []
    return entries


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="", help="only rules whose code starts with this (SF4, SF402)")
    parser.add_argument("--repos", type=Path, help="folder holding checked-out repositories")
    parser.add_argument("--stabfix", type=Path, default=ROOT, help="checkout whose stabfix is measured")
    parser.add_argument("--verbose", action="store_true", help="list every instance with its verdict")
    args = parser.parse_args(argv)
    checkout = args.stabfix.resolve()
    header = f"{'rule':<6}  {'mined':>5}  {'cases found':>11}  {'cross-file':>10}"
    print(header + (f"  {'real files found':>16}" if args.repos else ""))
    totals = [0, 0, 0, 0, 0]
    for code, instances in load_entries(args.rules).items():
        found = cross = real_hits = real_seen = 0
        for entry in instances:
            hit = case_found(ROOT / entry["case"], code, checkout)
            found += hit
            cross += bool(entry.get("cross_file"))
            real = real_file_found(entry, code, args.repos.resolve(), checkout) if args.repos else None
            if real is not None:
                real_seen += 1
                real_hits += real
            if args.verbose:
                real_text = "" if real is None else f"  real={'found' if real else 'missed'}"
                print(f"    {'found ' if hit else 'MISSED'}  {entry['case']}{real_text}")
        row = f"{code:<6}  {len(instances):>5}  {found:>5}/{len(instances):<5}  {cross:>10}"
        print(row + (f"  {real_hits:>8}/{real_seen:<7}" if args.repos else ""))
        for index, value in enumerate((len(instances), found, cross, real_hits, real_seen)):
            totals[index] += value
    row = f"{'total':<6}  {totals[0]:>5}  {totals[1]:>5}/{totals[0]:<5}  {totals[2]:>10}"
    print(row + (f"  {totals[3]:>8}/{totals[4]:<7}" if args.repos else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
