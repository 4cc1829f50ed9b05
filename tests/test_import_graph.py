"""The import graph of `stabfix/`, read from the source with grimp: no import circle anywhere (a
module never needs, through any chain of imports, function-level ones included, a module that needs
it), and `stabfix/model/` is layers that import only downward."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("stabfix", cache_dir=None)


def test_no_import_circle_in_stabfix(graph):
    circles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                circle = (importer, *back[:-1])
                start = circle.index(min(circle))  # one spelling per circle, whichever module it was found from
                circles.add(" -> ".join(circle[start:] + circle[: start + 1]))
    assert not circles, "import circles:\n" + "\n".join(sorted(circles))


def model_layers() -> dict:
    """The layers of stabfix.model, lowest first, as tools/relayout_model.py lays them out."""
    path = Path(__file__).resolve().parent.parent / "tools" / "relayout_model.py"
    spec = importlib.util.spec_from_file_location("relayout_model", path)
    relayout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(relayout)
    return relayout.LAYERS


def test_every_model_module_sits_in_a_layer(graph):
    """`ls stabfix/model` shows the layers: no module lies beside them."""
    children = {module.rpartition(".")[2] for module in graph.find_children("stabfix.model")}
    assert children == set(model_layers())


def test_model_layers_import_only_downward(graph):
    """A layer's modules import only from their own layer and the layers below it."""
    layers = list(reversed(model_layers()))  # grimp wants the highest first
    illegal = graph.find_illegal_dependencies_for_layers(
        layers=[grimp.Layer(layer, independent=False) for layer in layers], containers={"stabfix.model"})
    chains = sorted(
        f"{dep.importer} imports {dep.imported}: "
        + " -> ".join([",".join(sorted(route.heads)), *route.middle, ",".join(sorted(route.tails))])
        for dep in illegal for route in dep.routes)
    assert not illegal, "imports from a lower layer to a higher one:\n" + "\n".join(chains)
