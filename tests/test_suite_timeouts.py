"""The suite cannot hang CI: every process a test starts and waits for with `subprocess.run` (or
`check_output`, `check_call`, `call`) is given a `timeout=`, so a stuck child fails its test instead of
holding an xdist worker until the CI job is killed."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
WAITING_CALLS = {"run", "check_output", "check_call", "call"}


def _calls_without_timeout(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WAITING_CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess"
                and not any(keyword.arg in ("timeout", None) for keyword in node.keywords)):
            lines.append(node.lineno)
    return lines


def test_every_waited_for_subprocess_in_the_tests_has_a_timeout():
    missing = [f"{path.name}:{line}" for path in sorted(TESTS.glob("*.py"))
               for line in _calls_without_timeout(path.read_text(encoding="utf-8"))]
    assert not missing, "subprocess calls without timeout=: " + ", ".join(missing)


def test_the_check_sees_a_missing_timeout_and_accepts_a_given_one():
    assert _calls_without_timeout("import subprocess\nsubprocess.run(['x'], check=True)\n") == [2]
    assert _calls_without_timeout("import subprocess\nsubprocess.run(['x'], timeout=5)\n") == []
    assert _calls_without_timeout("import subprocess\nsubprocess.check_output(['x'], **options)\n") == []
