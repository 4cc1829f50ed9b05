#!/usr/bin/env python
"""`stabfix apply --unsafe-fixes` over real code, one rule at a time, with every diff kept for reading.

    python bench/apply_corpus.py [REPO_DIR ...]

Copies the real-code corpus (bench/real_code.py's 33 wheels), the bench corpus and any checked-out
repositories given on the command line into bench/.cache/apply/<corpus>/ (fresh each run), scans them
once (JSON) to find the files with a fixable finding, then, per fixable rule, runs
`stabfix apply --unsafe-fixes --select CODE --diff` on those files and writes the unified diff to
bench/.cache/apply_last/<CODE>.diff. Finally it applies every fix for real and checks that each rewritten
file compiles and that a second apply changes nothing. Prints rewrites per rule and safety, and the
files of each diff, so that every rewrite can be judged by reading it (the judgements go to
bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import real_code  # noqa: E402
import scan_speed  # noqa: E402

WORK = scan_speed.CACHE / "apply"
DIFFS = scan_speed.CACHE / "apply_last"


def stabfix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("CI", None)
    return subprocess.run([sys.executable, "-m", "stabfix", *args], cwd=cwd, capture_output=True, text=True, env=env)


def copy_corpora(repos: list[Path]) -> list[Path]:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    roots = []
    for name, parent, packages in real_code.CORPORA[:2]:
        real_code.prepare(parent, packages)
        roots.append(Path(shutil.copytree(parent, WORK / name)))
    for repo in repos:
        target = WORK / repo.name
        shutil.copytree(repo, target, ignore=shutil.ignore_patterns(".git"))
        (target / "stabfix.yaml").write_text("# no project config applies\n", encoding="utf-8")
        roots.append(target)
    for root in roots:
        # each copy is its own repository, as a checkout is: the search for the project's declared torch
        # version (stabfix.target) stops there instead of reaching this repository's pyproject.toml
        (root / ".git").mkdir(exist_ok=True)
    return roots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path, help="checked-out repositories to add to the corpus")
    args = parser.parse_args(argv)
    roots = copy_corpora([repo.resolve() for repo in args.repos])
    shutil.rmtree(DIFFS, ignore_errors=True)
    DIFFS.mkdir(parents=True)
    rewrites: Counter = Counter()
    total_files = 0
    failures: list[str] = []
    for root in roots:
        scan = stabfix("scan", "--no-cache", "--output-format", "json", ".", cwd=root)
        report = json.loads(scan.stdout)
        total_files += report["summary"]["files_scanned"]
        fixable: dict[str, set[str]] = {}
        for finding in report["findings"]:
            if finding["fix_safety"] != "none":
                fixable.setdefault(finding["code"], set()).add(finding["path"])
                rewrites[finding["code"], finding["fix_safety"]] += 1
        for code, paths in sorted(fixable.items()):
            diff = stabfix("apply", "--unsafe-fixes", "--no-cache", "--select", code, "--diff", *sorted(paths), cwd=root)
            with (DIFFS / f"{code}.diff").open("a", encoding="utf-8") as handle:
                handle.write(f"# ===== {root.name}\n{diff.stdout}")
        touched = sorted({path for paths in fixable.values() for path in paths})
        if not touched:
            continue
        first = stabfix("apply", "--unsafe-fixes", "--no-cache", *touched, cwd=root)
        if first.returncode not in (0, 1):
            failures.append(f"{root.name}: apply exited {first.returncode}: {first.stderr.strip()[:300]}")
        for path in touched:
            try:
                compile((root / path).read_bytes(), path, "exec", dont_inherit=True)
            except SyntaxError as exc:
                failures.append(f"{root.name}/{path}: does not compile after apply: {exc}")
        second = stabfix("apply", "--unsafe-fixes", "--no-cache", "--diff", *touched, cwd=root)
        if second.stdout.strip():
            failures.append(f"{root.name}: a second apply still changes files:\n{second.stdout[:2000]}")
    print(f"files scanned: {total_files}; fixable findings per rule and safety:")
    for (code, safety), count in sorted(rewrites.items()):
        print(f"   {code} {safety:<6} {count}")
    print(f"diffs per rule in {DIFFS}")
    for line in failures:
        print(f"FAILED: {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
