"""Checking a report's destination (`-o`, `verify --json`) before the run, so that a typo in a path
costs one line at once instead of a whole run whose report is then lost."""

from __future__ import annotations

import os
from pathlib import Path


def unwritable(path: Path) -> str | None:
    """One line saying why the report cannot be written to `path` (None: it can). Its folder is created,
    as writing it would; a file that did not exist is removed again."""
    if path.is_dir():
        return f"cannot write {path}: it is a folder"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    if not existed:
        os.unlink(path)
    return None
