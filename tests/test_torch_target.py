"""The project's torch version: read from its declared dependencies or `target-torch`, and no fix
offered whose API is newer than the oldest torch the project allows."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from helpers import json_report, write
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.target import TorchTarget, TorchTargets

AMP_SOURCE = textwrap.dedent(
    """\
    import torch

    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        loss = torch.ones(1)
    """
)


def target_of(root: Path, relative: str = "train.py"):
    targets = TorchTargets()
    path = write(root, relative, "x = 1\n")
    return targets.for_file(path), targets.warnings


# -- reading the declared requirement, format by format -------------------------------------------------
@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        ("torch>=1.13", (1, 13)),
        ("torch==1.6.0", (1, 6)),
        ("torch~=2.0", (2, 0)),
        ("torch~=1.13.1", (1, 13)),
        ("torch>1.13,<3", (1, 13)),
        ("torch==2.*", (2, 0)),
        ("torch>=1.8,>=1.13", (1, 13)),
        ("torch==2.1.0+cu118", (2, 1)),
        ("Torch >= 2.2 ; python_version >= '3.9'", (2, 2)),
        ("torch[opt-einsum]>=2.4", (2, 4)),
    ],
)
def test_the_lowest_version_a_requirement_allows(tmp_path, requirement, expected):
    write(tmp_path, "requirements.txt", requirement + "\n")
    target, warnings = target_of(tmp_path)
    assert target is not None and target.version == expected
    assert "requirements.txt" in target.source
    assert warnings == []


@pytest.mark.parametrize("requirement", ["torch", "torch<2", "torch!=2.0.1", "torchvision>=0.20", "pytorch-lightning>=2.4"])
def test_no_lower_bound_on_torch_sets_no_limit(tmp_path, requirement):
    write(tmp_path, "requirements.txt", requirement + "\n")
    assert target_of(tmp_path) == (None, [])


def test_pyproject_dependencies_optional_dependencies_and_groups(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "p"\ndependencies = ["numpy", "torch>=2.4"]\n')
    assert target_of(tmp_path)[0].version == (2, 4)
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [project]
        name = "p"
        dependencies = ["numpy"]
        [project.optional-dependencies]
        gpu = ["torch>=2.1"]
        [dependency-groups]
        dev = ["pytest", {include-group = "gpu"}]
        """
    ))
    target = target_of(tmp_path)[0]
    assert target.version == (2, 1) and target.source.startswith("`torch>=2.1` in ")


def test_pyproject_dynamic_dependencies_read_from_files(tmp_path):
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [project]
        name = "p"
        dynamic = ["dependencies", "optional-dependencies"]
        [tool.setuptools.dynamic]
        dependencies = { file = ["deps/base.in"] }
        optional-dependencies.train = { file = "deps/train.in" }
        """
    ))
    write(tmp_path, "deps/base.in", "numpy\n")
    write(tmp_path, "deps/train.in", "torch>=2.2\n")
    assert target_of(tmp_path)[0].version == (2, 2)


def test_requirements_follow_includes_and_skip_comments_options_and_continuations(tmp_path):
    write(tmp_path, "requirements-dev.txt", "-r requirements/base.txt\npytest  # torch>=9.0 is only a comment\n")
    write(tmp_path, "requirements/base.txt", textwrap.dedent(
        """\
        # torch>=9.9 commented out
        --index-url https://download.pytorch.org/whl/cu118
        -e .
        numpy>=1.24
        torch>=1.13 \\
            --hash=sha256:0123
        -r base.txt
        """
    ))
    target, warnings = target_of(tmp_path)
    assert target.version == (1, 13)
    assert target.source == f"`torch>=1.13` in {tmp_path / 'requirements/base.txt'}"
    assert warnings == []


def test_setup_cfg_install_requires_and_extras(tmp_path):
    write(tmp_path, "setup.cfg", textwrap.dedent(
        """\
        [metadata]
        name = p
        [options]
        install_requires =
            numpy
            # torch>=9.0
        [options.extras_require]
        train =
            torch>=1.10
        """
    ))
    assert target_of(tmp_path)[0].version == (1, 10)


def test_published_metadata_of_an_sdist_or_an_unpacked_wheel(tmp_path):
    # flair 0.15.1's wheel: `Requires-Dist: torch>=1.13.1` beside the package folder
    write(tmp_path / "wheel", "flair-0.15.1.dist-info/METADATA", textwrap.dedent(
        """\
        Metadata-Version: 2.1
        Name: flair
        Requires-Dist: numpy
        Requires-Dist: torch>=1.13.1
        Requires-Dist: torch>=2.5; extra == "new"

        long description naming torch>=9.0
        """
    ))
    assert target_of(tmp_path / "wheel", "flair/trainers/trainer.py")[0].version == (1, 13)
    write(tmp_path / "sdist", "PKG-INFO", "Metadata-Version: 2.1\nName: p\nRequires-Dist: torch==2.2.0\n")
    assert target_of(tmp_path / "sdist", "p/train.py")[0].version == (2, 2)


def test_a_pyproject_nested_past_the_parsers_recursion_is_warned_and_ignored(tmp_path):
    write(tmp_path, "pyproject.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n")
    write(tmp_path, "requirements.txt", "torch>=1.13\n")
    target, warnings = target_of(tmp_path)
    assert target.version == (1, 13)
    assert any("pyproject.toml" in warning for warning in warnings)


def test_literal_setup_py_including_a_named_list(tmp_path):
    write(tmp_path, "setup.py", textwrap.dedent(
        """\
        from setuptools import setup

        REQUIRED = ["numpy", "torch==1.6.0"]

        setup(name="p", install_requires=REQUIRED, extras_require={"fast": ["torch>=2.0"]})
        """
    ))
    target = target_of(tmp_path)[0]
    assert target.version == (1, 6) and "`torch==1.6.0` in " in target.source


def test_setup_py_that_computes_its_requirements_sets_no_limit(tmp_path):
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(install_requires=open('deps').read().split())\n")
    assert target_of(tmp_path) == (None, [])


def test_lowest_of_every_declaration_of_the_nearest_project(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=1.8\n")  # the outer project
    write(tmp_path, "sub/pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n')
    write(tmp_path, "sub/requirements-ci.txt", "torch==2.2.0\n")
    assert target_of(tmp_path, "sub/pkg/train.py")[0].version == (2, 2)
    assert target_of(tmp_path, "other/train.py")[0].version == (1, 8)


def test_the_search_stops_at_the_repository_root(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=1.8\n")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert target_of(tmp_path, "repo/src/train.py") == (None, [])


def test_malformed_declarations_are_ignored_with_a_warning(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=1.13,,\nnumpy>=\n")
    write(tmp_path, "pyproject.toml", "[project\n")
    write(tmp_path, "setup.cfg", "no section header\n")
    write(tmp_path, "setup.py", "setup(install_requires=[\n")
    target, warnings = target_of(tmp_path)
    assert target is None
    assert len(warnings) == 3, warnings
    assert any("`torch>=1.13,,`" in warning for warning in warnings)


# -- the fixes: withheld where the project's torch is older than their API ----------------------------
def _fix_state(source: str, code: str, target: TorchTarget | None) -> list[tuple[str, str]]:
    analysis = analyse_text(source, "t.py", [checker_classes()[code]], load_catalog(), target)
    return [(item.finding.fix_safety, item.finding.fix_withheld) for item in analysis.findings]


@pytest.mark.parametrize(
    ("source", "code", "needs"),
    [
        ("import torch\nscaler = torch.cuda.amp.GradScaler()\n", "SF302", (2, 3)),
        ("import torch\nwith torch.cuda.amp.autocast():\n    pass\n", "SF302", (1, 12)),
        ("import torch\n\n@torch.cuda.amp.custom_fwd\ndef f(ctx, x):\n    return x\n", "SF302", (2, 4)),
        (
            "from torch.cuda.amp import GradScaler, autocast\nscaler = GradScaler()\nwith autocast():\n    pass\n",
            "SF302",
            (2, 3),
        ),
    ],
)
def test_each_fix_is_offered_exactly_from_the_torch_that_has_its_api(source, code, needs):
    older = (needs[0], needs[1] - 1) if needs[1] else (needs[0] - 1, 99)
    offered = _fix_state(source, code, TorchTarget(needs, "test"))
    withheld = _fix_state(source, code, TorchTarget(older, "test"))
    assert offered and all(safety != "none" and not reason for safety, reason in offered)
    assert any(safety == "none" and f"needs torch>={needs[0]}.{needs[1]}" in reason for safety, reason in withheld)
    assert _fix_state(source, code, None) == offered


def test_zero_grad_set_to_none_needs_torch_1_7():
    source = textwrap.dedent(
        """\
        def train(model, optimizer, loader, loss_fn):
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
        """
    )
    assert _fix_state(source, "SF404", TorchTarget((1, 7), "test")) == [("unsafe", "")]
    ((safety, reason),) = _fix_state(source, "SF404", TorchTarget((1, 6), "`torch==1.6.0` in setup.py"))
    assert safety == "none"
    assert "needs torch>=1.7, but `torch==1.6.0` in setup.py allows torch 1.6" in reason


# -- end to end: apply, the config override, the reports ----------------------------------------------
def test_apply_keeps_the_legacy_api_a_torch_1_13_project_needs(tmp_path, run_cli):
    write(tmp_path, "requirements.txt", "torch>=1.13  # oldest supported\n")
    source = write(tmp_path, "train.py", AMP_SOURCE)
    result = run_cli("apply", str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr  # the GradScaler finding is left
    text = source.read_text()
    assert "torch.cuda.amp.GradScaler()" in text and "torch.amp.GradScaler" not in text
    assert 'torch.amp.autocast("cuda")' in text  # torch.amp.autocast is in 1.12


def test_apply_rewrites_for_a_torch_2_4_project(tmp_path, run_cli):
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    source = write(tmp_path, "train.py", AMP_SOURCE)
    result = run_cli("apply", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'torch.amp.GradScaler("cuda")' in source.read_text()


def test_a_torch_1_6_project_gets_no_torch_amp_at_all(tmp_path, run_cli):
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(install_requires=['torch==1.6.0'])\n")
    source = write(tmp_path, "train.py", AMP_SOURCE)
    run_cli("apply", str(tmp_path))
    assert source.read_text() == AMP_SOURCE


def test_target_torch_in_the_config_overrides_the_dependencies(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [project]
        name = "p"
        dependencies = ["torch>=1.13"]
        [tool.stabfix]
        target-torch = "2.4"
        """
    ))
    source = write(tmp_path, "train.py", AMP_SOURCE)
    assert run_cli("apply", str(tmp_path)).returncode == 0
    assert 'torch.amp.GradScaler("cuda")' in source.read_text()


def test_target_torch_in_stabfix_yaml_lowers_the_target(tmp_path, run_cli):
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    write(tmp_path, "stabfix.yaml", 'target-torch: "1.13"\n')
    write(tmp_path, "train.py", AMP_SOURCE)
    report = json_report(run_cli("scan", str(tmp_path), "--output-format", "json", "--no-cache"))
    scaler = next(item for item in report["findings"] if "GradScaler" in item["message"])
    assert scaler["fix_safety"] == "none"
    assert f'`target-torch = "1.13"` in {tmp_path / "stabfix.yaml"}' in scaler["fix_withheld"]
    autocast = next(item for item in report["findings"] if "autocast" in item["message"])
    assert autocast["fix_safety"] == "safe" and "fix_withheld" not in autocast


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("target-torch: 2.1\n", "must be a quoted version string"),
        ('target-torch: "two"\n', "is not a version"),
        ("target-torch: [2, 1]\n", "must be a quoted version string"),
    ],
)
def test_a_broken_target_torch_is_a_config_error(tmp_path, run_cli, setting, complaint):
    write(tmp_path, "stabfix.yaml", setting)
    write(tmp_path, "train.py", AMP_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 2
    assert "'target-torch'" in result.stderr and complaint in result.stderr
    assert "Traceback" not in result.stderr


def test_reports_say_why_the_fix_is_withheld(tmp_path, run_cli):
    write(tmp_path, "requirements.txt", "torch>=1.13\ntorch>=2.0,,\n")
    write(tmp_path, "train.py", AMP_SOURCE)
    text = run_cli("scan", str(tmp_path), "--no-cache")
    assert "no automatic fix — the fix (use `torch.amp.GradScaler`" in text.stdout
    assert "needs torch>=2.3, but `torch>=1.13` in" in text.stdout
    assert "warning:" in text.stderr and "`torch>=2.0,,`" in text.stderr  # read what it could, said what it could not
    sarif = json.loads(run_cli("scan", str(tmp_path), "--no-cache", "--output-format", "sarif").stdout)
    properties = [result["properties"] for result in sarif["runs"][0]["results"]]
    assert sum("fix_withheld" in item for item in properties) == 1


def test_the_cache_is_keyed_on_the_torch_target(tmp_path, run_cli):
    requirements = write(tmp_path, "requirements.txt", "torch>=2.4\n")
    write(tmp_path, "train.py", AMP_SOURCE)

    def safeties():
        report = json_report(run_cli("scan", str(tmp_path), "--output-format", "json", cwd=tmp_path))
        return sorted(item["fix_safety"] for item in report["findings"])

    assert safeties() == ["safe", "safe"]
    requirements.write_text("torch>=1.13\n")
    assert safeties() == ["none", "safe"]
