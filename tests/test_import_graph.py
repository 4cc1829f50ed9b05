"""No import circle anywhere in `stabfix/`: a module never needs, through any chain of imports
(function-level ones included), a module that needs it. Read from the source with grimp."""

from __future__ import annotations

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
