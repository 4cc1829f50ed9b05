"""Jupyter notebooks as one Python module: read (nbformat), mask IPython syntax, locate findings in cells,
and write fixed cell sources back into the file's own JSON text.

The code cells are joined into one module, each after a `# stabfix:cell-N` marker line (N counts every
cell of the notebook from 1, markdown too, as editors number them). IPython lines that are not Python
(`%time`, `!pip install`, `x = !ls`, `?obj`, `obj?`, a `%%capture` header) become `pass` (or
`x = get_ipython()`) with a `# stabfix:ipython-K` comment, line for line, so every finding keeps its
line; cells whose body is not Python (`%%bash`, `%%writefile`) are left out. Writing back replaces only
the changed cells' `source` values in the original text, in the shape they had (a list of lines or one
string, same indentation), so outputs, metadata, key order and formatting stay byte-identical; the result
is parsed again and must equal the notebook with just those sources changed.
"""

from __future__ import annotations

import bisect
import copy
import difflib
import io
import json
import json.decoder
import json.scanner
import re
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path

from stabfix.findings import Finding
from stabfix.source import SourceError, read_regular_file

NOTEBOOK_SUFFIX = ".ipynb"
PYTHON_SUFFIXES = (".py", ".pyi")
# Cell magics whose body is Python run in the kernel; any other (%%bash, %%writefile, %%html) is skipped.
PYTHON_BODY_CELL_MAGICS = frozenset({"capture", "time", "timeit", "prun", "debug"})

_CELL_MARK = "# stabfix:cell-{}"
_CELL_MARK_LINE = re.compile(r"^[ \t]*# stabfix:cell-(\d+)[ \t]*(?:\r\n|\r|\n|$)", re.MULTILINE)
_IPYTHON_MARK = "  # stabfix:ipython-{}"
_IPYTHON_MARK_AT_END = re.compile(r"[ \t]*# stabfix:ipython-(\d+)[ \t]*$")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MAGIC_START = re.compile(r"[ \t]*(?:%|!(?!=)|\?)")
_ASSIGNED_FROM_MAGIC = re.compile(r"[ \t]*([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*)[%!]")
_HELP_SUFFIX = re.compile(r"[ \t]*[\w.]+\?{1,2}[ \t]*$")
_CELL_MAGIC_NAME = re.compile(r"[ \t]*%%(\w+)")
_MESSAGE_LINE = re.compile(r"\bline (\d+)\b")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class NotebookError(SourceError):
    """The notebook cannot be read or written back; the message says why in one line."""


def is_notebook(path: str | Path) -> bool:
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


@dataclass
class _Cell:
    number: int  # 1-based among all cells
    source: str  # the cell's code as Jupyter joins it
    masked: str  # the same lines with IPython syntax masked
    ipython_lines: dict[int, str]  # mark -> the original line (without its line break)
    module_start: int = 0  # module line of the cell's first line
    file_lines: list[int] = field(default_factory=list)  # file line holding each cell line
    value_span: tuple[int, int] = (0, 0)  # the `source` value in the file's text


@dataclass
class Notebook:
    """Read like a Python file (stabfix.source.SourceFile): `raw` the file's bytes, `text` the code cells
    as one module; `encode` gives the bytes for a rewritten module."""

    path: Path
    raw: bytes
    json_text: str
    document: dict
    cells: list[_Cell]  # the code cells joined into `text`
    text: str

    def __post_init__(self) -> None:
        # the module line of each cell's marker, which counts as the cell's first line
        self._starts = [cell.module_start - 1 for cell in self.cells]

    # -- findings -------------------------------------------------------------------------------
    def locate(self, finding: Finding) -> Finding:
        """The finding at its cell and line: `cell`, `cell_line`, `cell_end_line` within the cell, and
        `line`/`end_line` the lines of the .ipynb file that hold those code lines (what SARIF and
        GitHub annotations point at); columns are columns of the code line."""
        cell, cell_line = self._cell_of(finding.line)
        end_cell, cell_end_line = self._cell_of(finding.end_line)
        if end_cell is not cell:  # never across cells: end at the cell's last line
            cell_end_line = max(cell_line, len(cell.file_lines))
        return replace(
            finding,
            message=self.in_cells(finding.message),
            line=_file_line(cell, cell_line),
            end_line=_file_line(cell, cell_end_line),
            cell=cell.number,
            cell_line=cell_line,
            cell_end_line=cell_end_line,
        )

    def in_cells(self, message: str) -> str:
        """A message's `line 16` (a line of the joined module) as `cell 4, line 4`: findings' messages
        and syntax errors name lines of the module."""
        return _MESSAGE_LINE.sub(self._cell_reference, message)

    def _cell_reference(self, match: re.Match) -> str:
        module_line = int(match.group(1))
        if not self.cells or module_line < self._starts[0]:
            return match.group(0)
        cell, cell_line = self._cell_of(module_line)
        return f"cell {cell.number}, line {cell_line}"

    def _cell_of(self, module_line: int) -> tuple[_Cell, int]:
        index = max(0, bisect.bisect_right(self._starts, module_line) - 1)
        cell = self.cells[index]
        return cell, max(1, module_line - cell.module_start + 1)

    # -- writing back ----------------------------------------------------------------------------
    def encode(self, module: str) -> bytes:
        """The file's bytes with each cell's source taken from the rewritten module (IPython lines
        restored). Raises NotebookError when a fix moved code across cells or touched an IPython line."""
        changed = self.changed_cells(module)
        return _splice(self, changed).encode("utf-8") if changed else self.raw

    def diff(self, module: str, display: str) -> str:
        """A unified diff per changed cell (`a/train.ipynb:cell 3`), in the cells' own code."""
        # each cell as if it ended with a line break, as Jupyter's last lines mostly do not
        return "".join(
            "".join(
                difflib.unified_diff(
                    (cell.source + "\n").splitlines(keepends=True),
                    (source + "\n").splitlines(keepends=True),
                    fromfile=f"a/{display}:cell {cell.number}",
                    tofile=f"b/{display}:cell {cell.number}",
                )
            )
            for cell, source in self.changed_cells(module)
        )

    def changed_cells(self, module: str) -> list[tuple["_Cell", str]]:
        """(cell, its new source) for each cell the rewritten module changes."""
        pieces = _CELL_MARK_LINE.split(module)
        head, rest = pieces[0], pieces[1:]
        numbers = [int(number) for number in rest[0::2]]
        if numbers != [cell.number for cell in self.cells]:
            raise NotebookError("a fix moved code across notebook cells; notebook left unchanged")
        texts = rest[1::2]
        if texts:
            texts[0] = head + texts[0]  # an import added above the first cell belongs to it
        changed: list[tuple[_Cell, str]] = []
        for cell, text in zip(self.cells, texts):
            if not _ends_with_break(cell.masked) and _ends_with_break(text):
                text = text[: -len(_LINE_BREAK.findall(text)[-1])]
            if text != cell.masked:
                changed.append((cell, _restore(text, cell)))
        return changed


def cell_lines(path: str | Path) -> dict[int, list[str]]:
    """Each code cell's lines by cell number, for showing a finding's code frame; {} when unreadable."""
    try:
        notebook = read_notebook(Path(path))
    except SourceError:
        return {}
    return {cell.number: cell.source.splitlines() for cell in notebook.cells}


# -- reading ------------------------------------------------------------------------------------------
def read_notebook(path: Path) -> Notebook:
    raw = read_regular_file(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a notebook: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    decoder = _SpanDecoder()
    try:
        document = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})") from None
    except RecursionError:
        raise NotebookError("not a notebook: JSON nested too deeply") from None
    _check_nbformat(text, document)
    cells = _code_cells(text, document, decoder)
    module_parts: list[str] = []
    line = 1
    for cell in cells:
        module_parts.append(_CELL_MARK.format(cell.number) + "\n")
        cell.module_start = line + 1
        body = cell.masked if not cell.masked or _ends_with_break(cell.masked) else cell.masked + "\n"
        module_parts.append(body)
        line += 1 + len(_LINE_BREAK.findall(body))
    return Notebook(path, raw, text, document, cells, "".join(module_parts))


def _check_nbformat(text: str, document: object) -> None:
    """nbformat's reader decides what a notebook is; stabfix reads and writes the version 4 layout."""
    try:
        import nbformat  # only runs that meet a notebook pay for importing it
        from nbformat.reader import NotJSONError
    except ImportError:  # a checkout run without installing stabfix's dependencies
        raise NotebookError("reading notebooks needs nbformat (pip install nbformat)") from None

    if not isinstance(document, dict) or "nbformat" not in document:
        raise NotebookError("not a notebook: the JSON has no 'nbformat' version")
    try:
        notebook = nbformat.reader.reads(text)
    except (NotJSONError, nbformat.NBFormatError, nbformat.ValidationError, ValueError, TypeError, KeyError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise NotebookError(f"not a notebook: {detail}") from None
    if notebook.get("nbformat") != 4:
        raise NotebookError(
            f"nbformat {notebook.get('nbformat')} notebook: only nbformat 4 is read (open and save it in Jupyter to upgrade)"
        )
    if not isinstance(document.get("cells"), list):
        raise NotebookError("not a notebook: 'cells' is not a list")


def _code_cells(text: str, document: dict, decoder: "_SpanDecoder") -> list[_Cell]:
    line_of = _LineIndex(text)
    cells: list[_Cell] = []
    next_mark = 1
    for number, raw_cell in enumerate(document["cells"], start=1):
        if not isinstance(raw_cell, dict) or raw_cell.get("cell_type") != "code":
            continue
        value = raw_cell.get("source", "")
        if isinstance(value, list) and all(isinstance(piece, str) for piece in value):
            source = "".join(value)
        elif isinstance(value, str):
            source = value
        else:
            raise NotebookError(f"not a notebook: cell {number}'s source is not text")
        masked = mask_ipython(source, next_mark)
        if masked is None:
            continue  # a %%bash (or other non-Python) cell
        masked_text, originals = masked
        next_mark += len(originals)
        cell = _Cell(number, source, masked_text, originals)
        start, end = decoder.source_span(text, raw_cell)
        cell.value_span = (start, end)
        cell.file_lines = _file_lines_of(text, start, value, line_of, source)
        cells.append(cell)
    return cells


def _file_lines_of(text: str, start: int, value, line_of: "_LineIndex", source: str) -> list[int]:
    """The file line holding each line of the cell: a list of lines has one element per line (as nbformat
    writes it), a single string holds them all on its own line."""
    line_offsets = [0] + [match.end() for match in _LINE_BREAK.finditer(source) if match.end() < len(source)]
    if isinstance(value, str):
        return [line_of(start)] * len(line_offsets)
    element_offsets: list[int] = []
    element_lines: list[int] = []
    offset = 0
    for piece, position, _ in _elements(text, start):
        element_offsets.append(offset)
        element_lines.append(line_of(position))
        offset += len(piece)
    if not element_offsets:
        return [line_of(start)]
    return [element_lines[bisect.bisect_right(element_offsets, at) - 1] for at in line_offsets]


def _file_line(cell: _Cell, cell_line: int) -> int:
    lines = cell.file_lines
    return lines[min(cell_line, len(lines)) - 1] if lines else 1


class _LineIndex:
    def __init__(self, text: str) -> None:
        self.breaks = [match.start() for match in re.finditer("\n", text)]

    def __call__(self, position: int) -> int:
        return bisect.bisect_left(self.breaks, position) + 1


class _SpanDecoder(json.JSONDecoder):
    """json's own decoder, also noting where each object and array starts and ends (by identity)."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict[int, tuple[int, int]] = {}

        def parse_object(s_and_end, *args):
            value, end = json.decoder.JSONObject(s_and_end, *args)
            self.spans[id(value)] = (s_and_end[1] - 1, end)
            return value, end

        def parse_array(s_and_end, *args):
            value, end = json.decoder.JSONArray(s_and_end, *args)
            self.spans[id(value)] = (s_and_end[1] - 1, end)
            return value, end

        self.parse_object = parse_object
        self.parse_array = parse_array
        self.scan_once = json.scanner.py_make_scanner(self)

    def source_span(self, text: str, cell: dict) -> tuple[int, int]:
        """Where the cell's `source` value lies in text: after its own `"source":` key, not one nested in
        its metadata or outputs."""
        start, end = self.spans[id(cell)]
        nested = [self.spans[id(value)] for value in cell.values() if isinstance(value, (dict, list))]
        for match in re.finditer(r'"source"[ \t\n\r]*:[ \t\n\r]*', text[start:end]):
            key_at = start + match.start()
            if any(inner_start <= key_at < inner_end for inner_start, inner_end in nested):
                continue
            value_at = start + match.end()
            value, value_end = self.raw_decode(text, value_at)
            if value == cell["source"]:
                return value_at, value_end
        raise NotebookError("not a notebook: a cell's source could not be located")  # pragma: no cover


def _elements(text: str, start: int):
    """(value, start, end) of each element of the JSON array of strings at text[start] == '['."""
    decoder = json.JSONDecoder()
    position = _WHITESPACE.match(text, start + 1).end()
    if text[position] == "]":
        return
    while True:
        value, end = decoder.raw_decode(text, position)
        yield value, position, end
        position = _WHITESPACE.match(text, end).end()
        if text[position] == "]":
            return
        position = _WHITESPACE.match(text, position + 1).end()  # past the comma


# -- IPython syntax -------------------------------------------------------------------------------------
def mask_ipython(source: str, first_mark: int = 1) -> tuple[str, dict[int, str]] | None:
    """The cell as Python, line for line: each IPython line replaced by a placeholder that ends with its
    mark; None for a cell whose body is not Python (a `%%bash` cell)."""
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    magic = _CELL_MAGIC_NAME.match(first)
    if magic is not None and magic.group(1) not in PYTHON_BODY_CELL_MAGICS:
        return None
    masked: list[str] = []
    originals: dict[int, str] = {}
    mark = first_mark
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        placeholder = _placeholder(body)
        if placeholder is not None and not _inside_statement("".join(masked)):
            indent = body[: len(body) - len(body.lstrip(" \t"))]
            masked.append(indent + placeholder + _IPYTHON_MARK.format(mark) + ending)
            originals[mark] = body
            mark += 1
        else:
            masked.append(line)
    return "".join(masked), originals


def _placeholder(body: str) -> str | None:
    assigned = _ASSIGNED_FROM_MAGIC.match(body)
    if assigned is not None:
        return assigned.group(1).strip() + " get_ipython()"
    if _MAGIC_START.match(body) or _HELP_SUFFIX.match(body):
        return "pass"
    return None


def _inside_statement(prefix: str) -> bool:
    """Whether the next line continues a statement: an open bracket, string or backslash (a `%` line
    there is Python's modulo, not a magic)."""
    if not prefix:
        return False
    try:
        for _ in tokenize.generate_tokens(io.StringIO(prefix).readline):
            pass
    except tokenize.TokenError:
        return True
    except (SyntaxError, ValueError):  # a cell that is not Python anyway: its error comes from the parse
        return False
    return False


def _restore(text: str, cell: _Cell) -> str:
    lines = text.splitlines(keepends=True)
    seen: set[int] = set()
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        found = _IPYTHON_MARK_AT_END.search(body)
        if found is None:
            continue
        mark = int(found.group(1))
        if mark not in cell.ipython_lines or mark in seen:
            raise NotebookError("a fix touched an IPython line; notebook left unchanged")
        seen.add(mark)
        original = cell.ipython_lines[mark]
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        original_indent = original[: len(original) - len(original.lstrip(" \t"))]
        restored = original if indent == original_indent else indent + original.lstrip(" \t")
        lines[index] = restored + line[len(body):]
    if seen != set(cell.ipython_lines):
        raise NotebookError("a fix removed an IPython line; notebook left unchanged")
    return "".join(lines)


def _ends_with_break(text: str) -> bool:
    return text.endswith(("\n", "\r"))


# -- writing ------------------------------------------------------------------------------------------
def _splice(notebook: Notebook, changed: list[tuple[_Cell, str]]) -> str:
    text = notebook.json_text
    ensure_ascii = text.isascii() and "\\u" in text
    expected = copy.deepcopy(notebook.document)
    cells_by_number = {number: cell for number, cell in enumerate(expected["cells"], start=1)}
    for cell, source in sorted(changed, key=lambda item: item[0].value_span, reverse=True):
        start, end = cell.value_span
        original = cells_by_number[cell.number]["source"]
        if isinstance(original, str):
            new_value: object = source
            encoded = json.dumps(source, ensure_ascii=ensure_ascii)
        else:
            new_value = source.splitlines(keepends=True)
            encoded = _encode_lines(text, start, end, new_value, ensure_ascii)
        cells_by_number[cell.number]["source"] = new_value
        text = text[:start] + encoded + text[end:]
    try:
        reread = json.loads(text)
    except ValueError:
        reread = None
    if reread != expected:
        raise NotebookError("the rewritten notebook would not hold the same JSON; notebook left unchanged")
    if notebook.raw.startswith(b"\xef\xbb\xbf"):
        text = "\ufeff" + text
    return text


def _encode_lines(text: str, start: int, end: int, lines: list[str], ensure_ascii: bool) -> str:
    """A JSON list of the lines in the layout of the list it replaces (text[start:end])."""
    if not lines:
        return "[]"
    elements = list(_elements(text, start))
    spelled = {value: text[begin:finish] for value, begin, finish in elements}  # unchanged lines keep their escapes
    encoded = [spelled.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    if elements:
        opening = text[start + 1 : elements[0][1]]
        closing = text[elements[-1][2] : end - 1]
        separator = text[elements[0][2] : elements[1][1]] if len(elements) > 1 else "," + opening
    else:  # `[]`: the layout of the key's line, one level deeper
        line_start = text.rfind("\n", 0, start) + 1
        key_indent = text[line_start : _WHITESPACE.match(text, line_start).end()].replace("\n", "")
        if line_start == 0:
            opening, closing, separator = "", "", ", "
        else:
            unit = _indent_unit(text)
            opening, closing, separator = "\n" + key_indent + unit, "\n" + key_indent, ",\n" + key_indent + unit
    return "[" + opening + separator.join(encoded) + closing + "]"


def _indent_unit(text: str) -> str:
    second = text.split("\n", 2)[1] if text.count("\n") >= 2 else " "
    unit = second[: len(second) - len(second.lstrip(" \t"))]
    return unit or " "
