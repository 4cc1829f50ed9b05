"""`stabfix verify --plot FILE` (PNG/SVG pictures) and the summary's sparklines.

Two real CLI runs (the healthy case as PNG, the leaky case as SVG against the healthy run's saved
report as baseline); the estimate panel, non-finite values and missing fields are drawn from
synthetic report dicts in-process.
"""

from __future__ import annotations

import copy
import io
import math
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_verify_run import CASES, cli

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")

from stabfix.verify import plot as plotmod  # noqa: E402
from stabfix.verify.sparkline import BLOCKS, can_encode, sparkline, summary_lines  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a valid PNG (signature, IHDR first); also decoded with PIL if present."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    assert data[-12:-8] == b"\x00\x00\x00\x00" and data[-8:-4] == b"IEND", "truncated PNG"
    try:
        from PIL import Image
    except ImportError:
        return width, height
    with Image.open(path) as img:
        img.load()  # decodes every pixel: a corrupt stream raises
        assert img.size == (width, height)
    return width, height


def svg_texts(path: Path) -> tuple[ET.Element, str]:
    """The parsed SVG root and its text (matplotlib draws text as paths and keeps each string in a
    comment)."""
    text = path.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root, text


def plausible_png(path: Path) -> None:
    width, height = png_size(path)
    assert 600 <= width <= 4000 and 400 <= height <= 3000, (width, height)
    assert path.stat().st_size > 20_000  # a blank canvas of that size compresses to a few KB


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plots")
    healthy = cli([f"{CASES}/healthy", "--plot", str(tmp / "healthy.png")], json_path=tmp / "healthy.json")
    leaky = cli([f"{CASES}/leaky", "--baseline", str(tmp / "healthy.json"), "--plot", str(tmp / "out" / "leaky.svg")],
                json_path=tmp / "leaky.json")
    return tmp, healthy, leaky


def test_plot_png_from_a_run(runs):
    tmp, healthy, _ = runs
    assert healthy.code == 0, healthy.out + healthy.err
    assert f"picture written to {tmp / 'healthy.png'}" in healthy.out.replace("\n", "")
    plausible_png(tmp / "healthy.png")
    assert not [p for p in tmp.iterdir() if p.name.startswith(".healthy.png")]  # no temp file left
    # the sparklines under the summary: 6 steps, one character each
    lines = {line.split()[0] + " " + line.split()[1]: line for line in healthy.out.splitlines()
             if line.startswith(("live memory", "grad norm"))}
    assert set(lines) == {"live memory", "grad norm"}
    assert "log scale" in lines["grad norm"]
    spark = lines["grad norm"].split()[2]
    assert len(spark) == 6 and set(spark) <= set(BLOCKS)


def test_plot_svg_with_baseline(runs):
    tmp, _, leaky = runs
    assert leaky.code == 1, leaky.out + leaky.err  # the leak fails its own check; the picture is still written
    root, text = svg_texts(tmp / "out" / "leaky.svg")
    assert float(root.get("width").removesuffix("pt")) >= 600
    for label in ("memory per step", "gradient norm", "loss", "peak in forward", "peak in backward",
                  "peak in optimizer", "live after step", "warm-up", "working tree", "baseline healthy.json", "MiB"):
        assert f"<!-- {label}" in text or label in text, label
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 50
    # growing memory: the sparkline rises step after step
    line = next(line for line in leaky.out.splitlines() if line.startswith("live memory"))
    spark = line.split()[2]
    assert spark[0] == BLOCKS[0] and spark[-1] == BLOCKS[-1] and list(spark) == sorted(spark)


def test_bad_extension_and_missing_matplotlib(tmp_path, monkeypatch):
    r = cli([f"{CASES}/healthy", "--plot", str(tmp_path / "memory.gif")])
    assert r.code == 2 and "'.gif' is not a picture format" in r.err and ".png or .svg" in r.err
    assert "step" not in r.out  # refused before the run
    assert not (tmp_path / "memory.gif").exists()

    from typer.testing import CliRunner

    from stabfix.cli import app

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    assert "pip install 'stabfix[plot]'" in plotmod.matplotlib_problem()
    with pytest.raises(plotmod.PlotError, match=r"stabfix\[plot\]"):
        plotmod.plot_report({"steps": []}, tmp_path / "x.png")
    result = CliRunner().invoke(app, ["verify", f"{CASES}/healthy", "--plot", str(tmp_path / "x.png")])
    try:
        output = result.output + result.stderr  # click >= 8.2 keeps stderr apart from stdout
    except ValueError:
        output = result.output
    assert result.exit_code == 2, output
    assert "--plot needs matplotlib" in output and "pip install 'stabfix[plot]'" in output
    assert not (tmp_path / "x.png").exists()


def _step(i: int, *, warmup: bool = False, **over) -> dict:
    s = {"step": i, "warmup": warmup, "time_ms": 2.0, "peak_bytes": (40 + i) * MIB,
         "phase_peak_bytes": {"forward": (30 + i) * MIB, "backward": (40 + i) * MIB, "optimizer": (35 + i) * MIB},
         "live_end_bytes": (20 + i) * MIB, "loss": 2.0 / i, "grad_norm": 10.0 ** i}
    s.update(over)
    return s


def synthetic_report() -> dict:
    steps = [_step(1, warmup=True), _step(2, warmup=True), _step(3),
             # a cheap step: exact accounting skipped, fields None (missing, not zero)
             _step(4, peak_bytes=None, phase_peak_bytes=None, live_end_bytes=None),
             _step(5, loss=math.nan, grad_norm=math.inf), _step(6, loss=None, grad_norm=math.nan)]
    return {"project": "synthetic", "memory_source": "live tensors (dispatch)", "steps": steps,
            "environment": {"device": "cpu", "torch": "2.x"}}


ESTIMATE = {
    "label": "estimate(fake)", "peak_bytes": 21 * GIB, "peak_phase": "backward",
    "breakdown": {"parameters": 2 * GIB, "gradients": 2 * GIB, "optimizer_state": 4 * GIB,
                  "activations": 12 * GIB, "non_tensor_margin": 1 * GIB},
    "device_memory_bytes": 16 * GIB, "fits": False,
    "variants": [{"name": "bf16 autocast", "peak_bytes": 15 * GIB, "computed": False},
                 {"name": "activation checkpointing", "peak_bytes": 11 * GIB, "computed": False},
                 {"name": "ZeRO-3 across 4 GPUs", "peak_bytes": 12 * GIB, "computed": True}],
    "extra_key_ignored": [1, 2],
}


def test_nonfinite_and_missing_values(tmp_path):
    report = synthetic_report()
    report["settings"] = {"budgets": {"peak_memory_mb": 50}}
    series = plotmod.memory_series(report)
    assert series["peak"][3] == (4, None) and series["forward"][3] == (4, None)  # None stays missing
    out = plotmod.plot_report(report, tmp_path / "bad.svg")
    _, text = svg_texts(out)
    assert "<!-- NaN -->" in text and "<!-- +Inf -->" in text and "non-finite (NaN/Inf)" in text
    assert "budget peak_memory_mb 50" in text
    plausible_png(plotmod.plot_report(report, tmp_path / "bad.png"))
    # nothing finite at all, no loss at all
    for s in report["steps"]:
        s["grad_norm"], s["loss"] = math.nan, None
    _, text = svg_texts(plotmod.plot_report(report, tmp_path / "none.svg"))
    assert "no finite grad norm" in text and "no loss reported" in text


def test_estimate_panel(tmp_path):
    report = synthetic_report()
    report["estimate"] = copy.deepcopy(ESTIMATE)
    base = synthetic_report()
    _, text = svg_texts(plotmod.plot_report(report, tmp_path / "est.svg", baseline=base))
    for label in ("estimate(fake): peak 21.00 GiB", "does NOT fit", "parameters", "gradients", "optimizer state",
                  "activations", "non-tensor margin", "device memory 16.00 GiB", "computed, not run", "bf16 autocast",
                  "<!-- baseline -->"):
        assert label in text, label
    plausible_png(plotmod.plot_report(report, tmp_path / "est.png"))
    # the estimate path alone: no steps, sparse estimate (no device memory, no variants)
    alone = {"project": "big", "steps": [], "estimate": {**ESTIMATE, "device_memory_bytes": None, "fits": None,
                                                         "variants": []}}
    width, height = png_size(plotmod.plot_report(alone, tmp_path / "alone.png"))
    assert width >= 400 and height >= 300


def test_cuda_runs_plot_the_allocator(tmp_path):
    report = synthetic_report()
    report["memory_source"] = "cuda allocator"
    for s in report["steps"]:
        s["cuda"] = {"max_allocated_bytes": 3 * GIB + s["step"], "allocated_end_bytes": 2 * GIB}
    series = plotmod.memory_series(report)
    assert series["peak"][0] == (1, 3 * GIB + 1) and series["live"][0] == (1, 2 * GIB)
    assert series["forward"][0] == (1, 31 * MIB)  # phase peaks: the dispatch counts
    assert summary_lines(report)[0][2].startswith("2.00 GiB")
    plausible_png(plotmod.plot_report(report, tmp_path / "cuda.png"))


def test_path_checks():
    assert plotmod.path_problem("a/b.PNG") is None and plotmod.path_problem("x.svg") is None
    assert "no extension" in plotmod.path_problem("memory")
    assert "'.jpg'" in plotmod.path_problem("m.jpg")
    assert plotmod.byte_unit([512.0]) == ("KiB", 1024.0)
    assert plotmod.byte_unit([5.0 * MIB]) == ("MiB", float(MIB))
    assert plotmod.byte_unit([20.0 * GIB])[0] == "GiB"
    assert plotmod.warmup_spans(synthetic_report()) == [(0.5, 2.5)]


def test_sparklines():
    assert sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == BLOCKS
    assert sparkline([5, 5, 5]) == BLOCKS[0] * 3
    assert sparkline([1, None, math.nan, 3]) == BLOCKS[0] + " !" + BLOCKS[-1]
    assert sparkline([1, 10, 100, 1000], log=True) == BLOCKS[0] + BLOCKS[2] + BLOCKS[5] + BLOCKS[-1]
    ascii_line = sparkline([1, 2, 3, math.inf], ascii_only=True)
    assert ascii_line.isascii() and ascii_line.endswith("!")
    assert len(sparkline(list(range(500)))) == 60  # long runs are bucketed to the terminal
    assert sparkline([0.0, 1.0, 10.0], log=True)[0] == BLOCKS[0]
    # clipped grad norms (1.0 give or take float noise) are flat, not a jagged trend
    assert sparkline([0.99999, 1.0, 0.99998], log=True, flat_within=0.001) == BLOCKS[0] * 3
    assert can_encode("utf-8") and not can_encode("ascii") and not can_encode("cp1252")
    lines = dict((name, (line, text)) for name, line, text in summary_lines(synthetic_report()))
    assert lines["live memory"][0][3] == " "  # step 4 was not measured
    assert "NaN/Inf" in lines["grad norm"][1]
    assert all(line.isascii() for _, line, text in summary_lines(synthetic_report(), ascii_only=True))


def test_ascii_console_gets_ascii_sparklines():
    from rich.console import Console

    from stabfix.verify.render import print_sparklines

    class AsciiFile(io.StringIO):
        encoding = "ascii"

    out = AsciiFile()
    print_sparklines(Console(file=out, width=100), synthetic_report())
    text = out.getvalue()
    assert text.isascii() and "live memory" in text and "grad norm" in text


def test_progress_rows_tolerate_unmeasured_steps():
    """A cheap step (exact accounting skipped) reports None memory: the row shows `-`, no crash."""
    from rich.console import Console

    from stabfix.verify.render import Progress

    out = io.StringIO()
    progress = Progress(Console(file=out, width=120))
    progress({"type": "step", "step": 1, "warmup": True, "time_ms": 1.0, "peak_bytes": 100, "live_end_bytes": 50,
              "loss": 1.0, "grad_norm": 0.5})
    progress({"type": "step", "step": 2, "warmup": False, "time_ms": 1.0, "peak_bytes": None, "live_end_bytes": None,
              "loss": 1.0, "grad_norm": None})
    row = out.getvalue().splitlines()[-1].split()
    assert row[0] == "2" and row[2:6] == ["-", "-", "-", "-"]
