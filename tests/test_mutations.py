"""Equivalence mutations (tests/mutations.py): a rule must keep finding its bad examples and stay silent
on its near misses when the same program is spelled another way.

The ratchet, tests/mutation_baseline.json, records per rule and mutation how many bad examples stay
reported, and which near misses already raise a false alarm under a mutation. A rule that keeps fewer
examples, or a near miss that starts to alarm, fails. A rule that does better raises its ratchet:
the test rewrites the rule's entry of the file (commit it) and says so in a warning.
"""

from __future__ import annotations

import fcntl
import json
import textwrap
import warnings

import pytest

from mutations import BASELINE, MUTATIONS, Program, baseline_of, mutate, rule_cells
from stabfix.catalog import load_catalog

CATALOG = load_catalog()


def _raise_ratchet(code: str, entry: dict) -> None:
    """Rewrite one rule's entry of the baseline; several xdist workers may do it at once."""
    with open(BASELINE, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        recorded = json.load(handle)
        recorded[code] = entry
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(recorded, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("code", sorted(CATALOG))
def test_mutations_keep_findings_and_near_misses_stay_silent(code):
    recorded = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert code in recorded, f"{code} has no entry in {BASELINE.name}: run `python tests/mutations.py --update-baseline --rule {code}`"
    cells = rule_cells(code, MUTATIONS, CATALOG)
    errors = [f"{cell.key}: {cell.errors[0]}" for cell in cells if cell.errors]
    assert not errors, "the scan failed on a mutated example:\n" + "\n".join(errors)
    now, before = baseline_of(cells)[code], recorded[code]

    new_alarms = sorted(set(now["known_false_alarms"]) - set(before["known_false_alarms"]))
    assert not new_alarms, (
        f"{code}: a near miss raises a false alarm once it is spelled another way:\n  " + "\n  ".join(new_alarms)
    )
    lost = {name: (before["kept"].get(name, 0), kept) for name, kept in now["kept"].items()
            if kept < before["kept"].get(name, 0)}
    if lost:
        gone = [cell.key for cell in cells if cell.kind == "bad" and not cell.not_applicable and not cell.kept
                and cell.mutation in lost]
        pytest.fail(
            f"{code}: fewer bad examples stay reported under a mutation than {BASELINE.name} records "
            + ", ".join(f"{name} {was} -> {kept}" for name, (was, kept) in sorted(lost.items()))
            + "; not reported now:\n  " + "\n  ".join(gone)
        )
    if now != before:
        _raise_ratchet(code, now)
        better = [f"{name} {before['kept'].get(name, 0)} -> {kept}" for name, kept in sorted(now["kept"].items())
                  if kept != before["kept"].get(name, 0)]
        fixed = sorted(set(before["known_false_alarms"]) - set(now["known_false_alarms"]))
        warnings.warn(
            f"{code} does better under the equivalence mutations ({', '.join(better) or 'same counts'}"
            f"{'; false alarms gone: ' + '; '.join(fixed) if fixed else ''}): {BASELINE.name} was raised, commit it",
            stacklevel=1,
        )


def test_every_mutation_applies_to_some_example_of_every_kind():
    """The generator is no stub: each mutation rewrites some bad example and some near miss, and a
    mutation that cannot apply says why."""
    applied = {name: set() for name in MUTATIONS}
    for spec in CATALOG.values():
        for kind in ("bad", "near_misses"):
            for example in getattr(spec, kind)[:3]:
                program = Program(example.code)  # parsed once: the rewrites never change it (as rule_cells)
                for name in MUTATIONS:
                    result = mutate(name, spec.code, example.code, program=program)
                    assert result.variants or result.not_applicable, (name, example.name)
                    if result.variants:
                        applied[name].add(kind)
    assert all(kinds == {"bad", "near_misses"} for kinds in applied.values()), applied


# --- the rewrites keep the program's meaning: run plain Python before and after --------------------

PROGRAM = textwrap.dedent(
    """\
    import math

    SCALE = 3


    class Box:
        def __init__(self, width):
            self.width = width
            self.unit = Unit(2)

        def area(self, height):
            total = self.width * height
            total += self.unit.size
            return total


    class Unit:
        def __init__(self, size):
            self.size = size


    def run(values, offset):
        acc = []
        base = offset * SCALE
        box = Box(base)
        for value in values:
            x = value + base
            y = math.sqrt(abs(x))
            acc.append(box.area(y))
        first = acc[0]
        last = acc[-1]
        return first, last, sum(acc)


    OUT = run([1, 2, 3], 4)
    """
)


def _execute(files: dict[str, str], tmp_path, name: str):
    root = tmp_path / name
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    if "pkg/main.py" in files:
        import importlib
        import sys

        sys.path.insert(0, str(root))
        try:
            sys.modules.pop("pkg", None), sys.modules.pop("pkg.main", None), sys.modules.pop("pkg.helpers", None)
            return _data(vars(importlib.import_module("pkg.main")))
        finally:
            sys.path.remove(str(root))
            for module in ("pkg", "pkg.main", "pkg.helpers"):
                sys.modules.pop(module, None)
    namespace: dict = {}
    exec(compile(files["example.py"], "example.py", "exec"), namespace)
    return _data(namespace)


def _data(namespace: dict) -> list[str]:
    """The plain values a program left in its module, whatever their names (neutral names rename them)."""
    return sorted(repr(value) for key, value in namespace.items()
                  if not key.startswith("__") and isinstance(value, (int, float, tuple, list)))


@pytest.mark.parametrize("name", ["tuple_assignment", "same_file_helper", "other_module_helper", "method",
                                  "passed_in", "neutral_names", "receiver_renamed"])
def test_a_mutation_keeps_what_the_program_computes(name, tmp_path):
    expected = _execute({"example.py": PROGRAM}, tmp_path, "original")
    result = mutate(name, "SF101", PROGRAM, focus=[26])
    assert result.variants, result.not_applicable
    for number, variant in enumerate(result.variants):
        files = dict(variant.files)
        assert files != {"example.py": PROGRAM}
        assert _execute(files, tmp_path, f"{name}_{number}") == expected, files


def test_module_script_keeps_what_the_function_computes():
    source = "def run(values, k=2):\n    acc = [v * k for v in values]\n    print(sum(acc))\n"
    result = mutate("module_script", "SF101", source)
    (variant,) = result.variants
    namespace = {"values": [1, 2, 3]}
    exec(dict(variant.files)["example.py"], namespace)
    assert namespace["acc"] == [2, 4, 6]


def test_rewrites_that_would_change_the_meaning_are_not_applied():
    dependent = "def f(p):\n    a = p + 1\n    b = a * 2\n    return b\n"
    assert mutate("tuple_assignment", "SF101", dependent).not_applicable
    early = "def f(p):\n    if p:\n        return\n    print(p)\n"
    assert mutate("module_script", "SF101", early).not_applicable
    assert mutate("module_script", "SF101", "def f(p):\n    return p + 1\n").not_applicable
    assert mutate("module_script", "SF101", "def test_f():\n    print(1)\n").not_applicable
    grad_read = "import torch\n\ndef f():\n    x = torch.zeros(3, requires_grad=True)\n    (x * 2).sum().backward()\n    return x.grad\n"
    assert mutate("device_move", "SF101", grad_read).not_applicable
    assert mutate("device_move", "SF102", "import torch\nx = torch.zeros(3)\n").not_applicable
    labels = "import torch\n\ndef f(y):\n    return y.detach()\n"
    assert mutate("cast", "SF101", labels).not_applicable, "a label may be an integer tensor"


def test_neutral_names_keep_keywords_hooks_and_imports():
    source = textwrap.dedent(
        """\
        import torch.nn.functional as F


        class Model:
            def training_step(self, batch, batch_idx, scale=1.0):
                inputs, labels = batch
                self.criterion = F.mse_loss
                return self.criterion(inputs, labels) * scale
        """
    )
    (variant,) = mutate("neutral_names", "SF101", source).variants
    renamed = dict(variant.files)["example.py"]
    assert "def training_step(a, b, c, scale=1.0):" in renamed
    assert "import torch.nn.functional as F" in renamed
    assert "criterion" not in renamed and "inputs" not in renamed
    assert Program(renamed)  # parses
    (variant,) = mutate("receiver_renamed", "SF101", source).variants
    assert "def training_step(a, batch, batch_idx, scale=1.0):" in dict(variant.files)["example.py"]
    assert mutate("receiver_renamed", "SF101", "def f(x):\n    return x\n").not_applicable


def test_every_variant_carries_the_examples_path_and_other_files():
    """An example of several files (`path:` and `files:` in its YAML) is mutated as its project: each
    variant keeps the other files and the example's path, and a helper module lands beside the example
    under a name no file of the project has."""
    from mutations import ExampleProject

    project = ExampleProject("project/train.py", (("project/__init__.py", ""), ("project/helpers.py", "X = 1\n")))
    source = "import torch\n\nfrom .helpers import X\n\n\ndef run(a):\n    b = torch.randn(3)\n    c = a + X\n    return b, c\n"
    for name in MUTATIONS:
        for variant in mutate(name, "SF420", source, project=project).variants:
            files = dict(variant.files)
            assert files["project/helpers.py"] == "X = 1\n" and "project/__init__.py" in files, (name, files)
            assert "project/train.py" in files and "example.py" not in files, (name, sorted(files))
    (first, *_) = mutate("other_module_helper", "SF420", source, project=project).variants
    files = dict(first.files)
    assert "from .helpers_1 import helper_1" in files["project/train.py"]
    assert "def helper_1" in files["project/helpers_1.py"]
    # a script beside a plain folder imports its helper absolutely
    script = ExampleProject("train.py", (("training/__init__.py", ""),))
    (first, *_) = mutate("other_module_helper", "SF420", source, project=script).variants
    assert "from helpers import helper_1" in dict(first.files)["train.py"]
