"""`stabfix apply`: safe by default, --unsafe-fixes, --diff, idempotent, byte-faithful, atomic."""

from __future__ import annotations

import os
import stat

from helpers import CLEAN_SOURCE, SF101_FIXED, SF101_SOURCE, json_report, write


def test_apply_fixes_and_reports_nothing_left(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("apply", str(tmp_path))
    assert result.returncode == 0, result.stdout
    assert "Applied 1 fix" in result.stdout and "Nothing left to fix" in result.stdout
    assert target.read_text() == SF101_FIXED
    compile(target.read_text(), "train.py", "exec")


def test_second_apply_changes_nothing(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    run_cli("apply", str(tmp_path))
    once = target.read_bytes()
    result = run_cli("apply", str(tmp_path))
    assert result.returncode == 0
    assert target.read_bytes() == once
    assert "Applied 0 fixes" in result.stdout


def test_files_without_findings_stay_byte_identical(tmp_path, run_cli):
    clean = write(tmp_path, "clean.py", "import torch\r\nx = torch.zeros(3)  # keep   spacing\r\n")
    before = (clean.read_bytes(), clean.stat().st_mtime_ns)
    write(tmp_path, "train.py", SF101_SOURCE)
    run_cli("apply", str(tmp_path))
    assert (clean.read_bytes(), clean.stat().st_mtime_ns) == before


def test_diff_prints_and_writes_nothing(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("apply", "--diff", str(tmp_path))
    assert result.returncode == 1
    assert "-    target.requires_grad_(True)" in result.stdout
    assert result.stdout.startswith("--- a/")
    assert target.read_text() == SF101_SOURCE


def test_diff_with_nothing_to_change_exits_0(tmp_path, run_cli):
    write(tmp_path, "clean.py", CLEAN_SOURCE)
    result = run_cli("apply", "--diff", str(tmp_path))
    assert result.returncode == 0 and result.stdout == ""


def test_crlf_bom_and_permissions_are_kept(tmp_path, run_cli):
    source = SF101_SOURCE.replace("\n", "\r\n")
    target = write(tmp_path, "train.py", b"\xef\xbb\xbf" + source.encode())
    target.chmod(0o754)
    assert run_cli("apply", str(tmp_path)).returncode == 0
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data[3:].decode() == SF101_FIXED.replace("\n", "\r\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o754


def test_declared_encoding_is_kept(tmp_path, run_cli):
    source = "# -*- coding: latin-1 -*-\n# caf\u00e9\n" + SF101_SOURCE
    target = write(tmp_path, "train.py", source.encode("latin-1"))
    assert run_cli("apply", str(tmp_path)).returncode == 0
    assert target.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\u00e9\n" + SF101_FIXED).encode("latin-1")


def test_no_temporary_files_are_left_behind(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    run_cli("apply", str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["train.py"]


def test_apply_json_reports_what_remains(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("apply", str(tmp_path), "--output-format", "json")
    report = json_report(result)
    assert report["findings"] == [] and report["summary"]["fixes_applied"] == 1


def test_broken_files_are_not_touched_by_apply(tmp_path, run_cli):
    broken = write(tmp_path, "broken.py", "x.requires_grad_(True\n")
    result = run_cli("apply", str(tmp_path))
    assert result.returncode == 1
    assert broken.read_text() == "x.requires_grad_(True\n"


def test_unsafe_fixes_need_the_flag(tmp_path, run_cli):
    # Build an unsafe fix from whichever shipped rule offers one in its examples.
    from stabfix.catalog import load_catalog

    examples = [
        (spec.code, example)
        for spec in load_catalog().values()
        if spec.fix_safety == "unsafe"
        for example in spec.bad
        if example.fixed
    ]
    if not examples:
        import pytest

        pytest.skip("no rule with an unsafe fix is shipped")
    code, example = examples[0]
    target = write(tmp_path, "train.py", example.code)
    safe_run = run_cli("apply", str(tmp_path), "--select", code)
    assert target.read_text() == example.code, "unsafe fix applied without --unsafe-fixes"
    assert safe_run.returncode == 1
    assert "--unsafe-fixes" in safe_run.stdout
    run_cli("apply", str(tmp_path), "--select", code, "--unsafe-fixes")
    assert target.read_text() == example.fixed


def test_a_fix_needing_torch_adds_no_second_import_below_a_constant(tmp_path, run_cli):
    # d2l's torch.py: a constant first, the imports after it; the fix must reuse the `import torch` there
    source = (
        "DATA_HUB = dict()\n\nimport torch\n\n\n"
        "def evaluate(model, loader):\n    model.eval()\n    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(-1) == y).sum().item()\n    return correct / len(loader.dataset)\n"
    )
    target = write(tmp_path, "evaluate.py", source)
    result = run_cli("apply", "--unsafe-fixes", "--select", "SF106", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = target.read_text()
    assert "@torch.no_grad()" in fixed
    assert fixed.count("import torch") == 1
    assert fixed.startswith("DATA_HUB = dict()\n")
