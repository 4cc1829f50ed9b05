"""Reading a Python file faithfully (encoding, BOM, line endings) and writing it back without losing
anything the user has: their latest edit, the symlink, the hard links, the mode and the owner."""

from __future__ import annotations

import codecs
import errno
import io
import os
import stat
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
    raw = read_regular_file(path, max_bytes)
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


_NOT_REGULAR = (
    (stat.S_ISDIR, "is a directory, not a Python file"),
    (stat.S_ISFIFO, "not a regular file (a FIFO), skipped"),
    (stat.S_ISCHR, "not a regular file (a character device), skipped"),
    (stat.S_ISBLK, "not a regular file (a block device), skipped"),
    (stat.S_ISSOCK, "not a regular file (a socket), skipped"),
)


def _refuse_unless_regular(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    for test, message in _NOT_REGULAR:
        if test(mode):
            raise SourceError(message)
    raise SourceError("not a regular file, skipped")


def read_regular_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """At most max_bytes of a regular file. A FIFO, a device (/dev/zero behind a link) or a socket is refused
    before it is opened, and the opened file is checked again, so nothing ever blocks or reads without end."""
    try:
        _refuse_unless_regular(os.stat(path).st_mode)
        # O_NONBLOCK: should the path have become a FIFO since the stat, opening it must not wait for a writer
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            _refuse_unless_regular(status.st_mode)
            if status.st_size > max_bytes:
                raise _too_large(status.st_size, max_bytes)
            raw = handle.read(max_bytes + 1)
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SourceError("symlink loop, skipped") from None
        if exc.errno == errno.EISDIR:
            raise SourceError("is a directory, not a Python file") from None
        raise SourceError(exc.strerror or str(exc)) from None
    if len(raw) > max_bytes:  # it grew after the size check
        raise _too_large(len(raw), max_bytes)
    return raw


def _too_large(size: int, max_bytes: int) -> SourceError:
    return SourceError(f"file too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:.0f} MB limit), skipped")


class FileChangedError(SourceError):
    """The file on disk is no longer the one that was analysed."""


CHANGED_MESSAGE = "changed on disk while stabfix was working on it; left as it is (run the command again)"


def replace_content(path: Path, original: bytes, data: bytes) -> None:
    """Make `data` the content of the file that held `original` when it was read.

    Never loses the user's work: the file is read again and compared right before it is replaced, and a file
    that changed meanwhile is left alone (FileChangedError); a read-only file is not rewritten (SourceError).
    A symlink keeps pointing where it did (its target gets the new content). The new content is written to a
    temporary file that takes the original's mode and owner and is renamed over it in one step, so a crash
    never leaves half a file; when a rename would split hard links, or could not keep the owner, the bytes are
    copied into the original file instead, with the old content kept in a backup file until they are on disk.
    """
    target = Path(os.path.realpath(path))
    try:
        status = os.stat(target)
    except OSError as exc:
        raise SourceError(f"cannot rewrite: {exc.strerror or exc}") from None
    if not stat.S_ISREG(status.st_mode):
        raise FileChangedError(CHANGED_MESSAGE)
    # The write bits, not just access(): root may write anything, yet a file its user made read-only stays so.
    if not status.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise SourceError("read-only file, not rewritten")
    try:
        if status.st_nlink > 1 or not _replace_keeping_owner(target, status, original, data):
            _copy_into(target, original, data)
    except PermissionError:
        raise SourceError("permission denied, not rewritten") from None
    except OSError as exc:
        raise SourceError(f"cannot rewrite: {exc.strerror or exc}") from None


def _unchanged(current: bytes, original: bytes) -> None:
    if current != original:
        raise FileChangedError(CHANGED_MESSAGE)


def _replace_keeping_owner(target: Path, status: os.stat_result, original: bytes, data: bytes) -> bool:
    """Rename a complete copy over target; False (nothing done) when the folder or the owner forbids it."""
    try:
        descriptor, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".stabfix.tmp", dir=target.parent)
    except PermissionError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temp_status = os.stat(temp_name)
        if (temp_status.st_uid, temp_status.st_gid) != (status.st_uid, status.st_gid):
            try:
                os.chown(temp_name, status.st_uid, status.st_gid)
            except PermissionError:
                Path(temp_name).unlink(missing_ok=True)
                return False
        os.chmod(temp_name, stat.S_IMODE(status.st_mode))  # after chown, which may clear set-id bits
        _unchanged(read_regular_file(target), original)  # right before the replace
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return True


def _copy_into(target: Path, original: bytes, data: bytes) -> None:
    """Write data into target's own inode (hard links, owner kept); the old bytes wait in a backup file until
    the new ones are on disk, so a crash half-way leaves the user's content recoverable next to the file."""
    backup_name = _backup(target, original)
    with open(target, "r+b") as handle:
        try:
            _unchanged(handle.read(MAX_FILE_BYTES + 1), original)
        except BaseException:
            Path(backup_name).unlink(missing_ok=True)  # nothing was written
            raise
        try:
            _overwrite(handle, data)
        except BaseException as error:
            try:
                _overwrite(handle, original)  # a write that failed half-way (disk full, size limit): undo it
            except OSError:
                raise SourceError(f"cannot rewrite ({error}); the original content is kept in {backup_name}") from None
            Path(backup_name).unlink(missing_ok=True)
            raise
    Path(backup_name).unlink(missing_ok=True)


def _overwrite(handle, data: bytes) -> None:
    handle.seek(0)
    handle.write(data)
    handle.truncate()
    handle.flush()
    os.fsync(handle.fileno())


def _backup(target: Path, original: bytes) -> str:
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".stabfix.bak", dir=target.parent)
    except PermissionError:  # a folder the user may not write to: the system's temporary folder
        descriptor, name = tempfile.mkstemp(prefix=f"{target.name}.", suffix=".stabfix.bak")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(original)
        handle.flush()
        os.fsync(handle.fileno())
    return name
