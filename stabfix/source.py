"""Reading a Python file faithfully (encoding, BOM, line endings) and writing it back atomically."""

from __future__ import annotations

import codecs
import errno
import io
import os
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 10 * 1024 * 1024


class SourceError(Exception):
    """The file cannot be analysed; the message says why in one line."""


@dataclass
class SourceFile:
    path: Path
    text: str
    encoding: str
    bom: bool
    raw: bytes

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def read_source(path: Path, max_bytes: int = MAX_FILE_BYTES) -> SourceFile:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SourceError(
                f"file too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:.0f} MB limit), skipped"
            )
        raw = path.read_bytes()
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SourceError("symlink loop, skipped") from None
        if exc.errno == errno.EISDIR:
            raise SourceError("is a directory, not a Python file") from None
        raise SourceError(exc.strerror or str(exc)) from None
    if b"\x00" in raw[:8192]:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    bom = raw.startswith(codecs.BOM_UTF8)
    body = raw[len(codecs.BOM_UTF8) :] if bom else raw
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        # detect_encoding also rejects undeclared non-UTF-8 bytes in the first lines: name the byte.
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as decode_error:
            raise SourceError(
                f"not valid UTF-8: byte 0x{body[decode_error.start]:02x} at offset {decode_error.start}"
            ) from None
        raise SourceError(f"bad encoding declaration: {exc}") from None
    encoding = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"not valid {encoding.upper()}: byte 0x{body[exc.start]:02x} at offset {exc.start}"
        ) from None
    except LookupError:
        raise SourceError(f"unknown encoding '{encoding}'") from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, raw=raw)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace path's content in one rename so a crash never leaves it half-written."""
    directory = path.parent
    mode = path.stat().st_mode
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".stabfix.tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode & 0o7777)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
