"""A content-hash cache of scan results, so re-scanning an unchanged repo takes about a second.

Keyed by the file's bytes, the rules that ran on it and the stabfix version; stored under the
project in `.stabfix_cache/`. Only clean analyses are stored (files that failed are retried).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from stabfix import __version__

CACHE_DIR_NAME = ".stabfix_cache"


def content_key(raw: bytes, codes: tuple[str, ...]) -> str:
    digest = hashlib.blake2b(raw, digest_size=20)
    digest.update(("|".join(codes) + "|" + __version__).encode())
    return digest.hexdigest()


class ScanCache:
    def __init__(self, root: Path) -> None:
        self.directory = root / CACHE_DIR_NAME
        self.file = self.directory / f"scan-{__version__}.json"
        self.entries: dict[str, list[dict]] = {}
        self.dirty = False

    def load(self) -> "ScanCache":
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            self.entries = {}
        return self

    def get(self, key: str) -> list[dict] | None:
        return self.entries.get(key)

    def put(self, key: str, findings: list[dict]) -> None:
        if self.entries.get(key) != findings:
            self.entries[key] = findings
            self.dirty = True

    def save(self, live_keys: set[str]) -> None:
        if not self.dirty:
            return
        # Keep only entries seen in this run plus a bounded remainder, so the file does not grow forever.
        kept = {key: value for key, value in self.entries.items() if key in live_keys}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# created by stabfix\n*\n", encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(kept, handle, separators=(",", ":"))
            os.replace(temp, self.file)
        except OSError:
            # A read-only checkout must still scan; the cache is only an accelerator.
            pass
