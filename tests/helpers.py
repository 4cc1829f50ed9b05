"""Small builders for the CLI tests."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

# A minimal SF101 finding: the target of F.mse_loss made to require grad (line 6).
SF101_SOURCE = textwrap.dedent(
    """\
    import torch.nn.functional as F


    def train_step(model, x, y):
        target = y.detach()
        target.requires_grad_(True)
        return F.mse_loss(model(x), target)
    """
)
SF101_FIXED = SF101_SOURCE.replace("    target.requires_grad_(True)\n", "")
assert SF101_FIXED != SF101_SOURCE
CLEAN_SOURCE = "import torch\n\n\ndef f(x):\n    return x * 2\n"


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def json_report(result) -> dict:
    return json.loads(result.stdout)


def example_project(example):
    """The view of a rule example's project its own file gets: the example's `files` beside it, held in
    memory, as `stabfix scan` would see them."""
    from stabfix.project import Project, ProjectIndex

    index = ProjectIndex.from_sources(example.project_sources())
    return Project(index).view(f"/stabfix-sources/{example.path}")
