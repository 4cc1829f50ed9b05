"""A non-editable install must carry the rule catalog; `import stabfix` must not import torch."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_ships_every_rule_yaml(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True, timeout=600,
    )
    (wheel,) = tmp_path.glob("stabfix-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {name.rsplit("/", 1)[-1] for name in names if name.startswith("stabfix/_rules/")}
    assert shipped == {path.name for path in (REPO / "rules").glob("SF*.yaml")}
    assert "stabfix/checkers/sf101_loss_target_requires_grad.py" in names
    # `verify -- COMMAND` puts this folder on PYTHONPATH: it is no package, but must ship
    assert "stabfix/verify/bootstrap/sitecustomize.py" in names


def test_import_stabfix_does_not_import_torch():
    code = "import sys, stabfix, stabfix.cli; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    assert result.stdout.strip() == "False"
