"""`stabfix server`: a real server process driven over stdio by a scripted LSP client, as an editor does.

The client frames JSON-RPC by hand (Content-Length headers) and reads every message into lsprotocol's
types, so a reply that does not fit the protocol fails the test."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from helpers import write

types = pytest.importorskip("lsprotocol.types", reason="the language server needs stabfix[lsp]")
from lsprotocol.converters import get_converter  # noqa: E402

from stabfix.docs import rule_url  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

CONVERTER = get_converter()
TIMEOUT = 60  # seconds: the first analysis loads every rule; later ones take milliseconds

# SF106 (evaluation without no_grad, a safe fix) and SF203 (anomaly detection left on, an unsafe fix).
BUGGY = textwrap.dedent(
    """\
    import torch

    torch.autograd.set_detect_anomaly(True)


    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            correct += (model(x).argmax(-1) == y).sum().item()
        return correct / len(loader.dataset)
    """
)
CLEAN = BUGGY.replace("torch.autograd.set_detect_anomaly(True)\n", "").replace(
    "def evaluate", "@torch.no_grad()\ndef evaluate"
)


class LspClient:
    """One `python -m stabfix server` process and the messages it sent, in order."""

    def __init__(self, cwd: Path, env: Optional[dict] = None) -> None:
        self.stderr_path = cwd / "server-stderr.txt"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stabfix", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
            env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})},
        )
        self._inbox: queue.Queue = queue.Queue()
        self.notifications: list[dict] = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    self._inbox.put(None)
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            self._inbox.put(json.loads(stream.read(length)))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": CONVERTER.unstructure(params)})

    def request(self, method: str, params: Any, result_type: Any = None) -> Any:
        self._next_id += 1
        self._send({"id": self._next_id, "method": method, "params": CONVERTER.unstructure(params)})
        message = self._wait(lambda message: message.get("id") == self._next_id and "method" not in message)
        assert "error" not in message, message
        return CONVERTER.structure(message["result"], result_type) if result_type else message["result"]

    def _wait(self, wanted: Callable[[dict], bool], timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = self._inbox.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise AssertionError(f"no such message within {timeout} s; server stderr:\n{self.stderr()}") from None
            if message is None:
                raise AssertionError(f"the server closed its output; stderr:\n{self.stderr()}")
            if "method" in message and "id" in message:  # a request from the server: answer it
                self._send({"id": message["id"], "result": None})
                continue
            if "method" in message:
                self.notifications.append(message)
            if wanted(message):
                return message

    def diagnostics(self, uri: str, version: int, timeout: float = TIMEOUT) -> types.PublishDiagnosticsParams:
        """The diagnostics the server publishes for this version of the document."""
        message = self._wait(
            lambda message: message.get("method") == "textDocument/publishDiagnostics"
            and message["params"]["uri"] == uri
            and message["params"].get("version") == version,
            timeout,
        )
        return CONVERTER.structure(message["params"], types.PublishDiagnosticsParams)

    def published_versions(self, uri: str, quiet_for: float) -> list[Optional[int]]:
        """The versions diagnostics were published for, once the server has said nothing for `quiet_for` s."""
        try:
            self._wait(lambda message: False, quiet_for)
        except AssertionError:
            pass
        return [
            message["params"].get("version")
            for message in self.notifications
            if message["method"] == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri
        ]

    def initialize(self, root: Path, options: Optional[dict] = None) -> types.InitializeResult:
        params = types.InitializeParams(
            process_id=os.getpid(),
            root_uri=root.as_uri(),
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
                    did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
                )
            ),
            initialization_options=options,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
        result = self.request("initialize", params, types.InitializeResult)
        self.notify("initialized", types.InitializedParams())
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            ),
        )
        return uri

    def change(self, uri: str, version: int, text: str, at: Optional[types.Range] = None) -> None:
        """The new text of the document, or (`at`) of that range of it, as editors send keystrokes."""
        change = (
            types.TextDocumentContentChangeWholeDocument(text=text)
            if at is None
            else types.TextDocumentContentChangePartial(range=at, text=text)
        )
        self.notify(
            "textDocument/didChange",
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            ),
        )

    def files_changed(self, *paths: Path) -> None:
        changes = [types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed) for path in paths]
        self.notify("workspace/didChangeWatchedFiles", types.DidChangeWatchedFilesParams(changes=changes))

    def code_actions(self, uri: str, at: types.Range, only: Optional[list[str]] = None) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=at,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
        return self.request("textDocument/codeAction", params, Optional[list[types.CodeAction]]) or []

    def stop(self) -> int:
        """shutdown, then exit: the server's exit status."""
        assert self.request("shutdown", None) is None
        self._send({"method": "exit"})
        try:
            return self.process.wait(timeout=TIMEOUT)
        finally:
            self.close()

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


@pytest.fixture
def server(tmp_path):
    clients = []

    def start(options: Optional[dict] = None) -> LspClient:
        client = LspClient(tmp_path)
        clients.append(client)
        client.initialize(tmp_path, {"debounceMs": 50, **(options or {})})
        return client

    yield start
    for client in clients:
        client.close()


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a code action's edits (all against the original text)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position: types.Position) -> int:
        # The test texts are ASCII, so UTF-16 units are characters.
        return offsets[position.line] + position.character if position.line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda edit: (edit.range.start.line, edit.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def only_edit(action: types.CodeAction, uri: str, version: int) -> list[types.TextEdit]:
    (change,) = action.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == version
    return change.edits


def applied_by_cli(run_cli, tmp_path: Path, text: str, *args: str) -> str:
    """What `stabfix apply` makes of the text, in a file of its own beside the edited one."""
    target = write(tmp_path / "cli", "model_eval.py", text)
    result = run_cli("apply", *args, str(target), cwd=tmp_path / "cli")
    assert result.returncode in (0, 1), result.stderr
    return target.read_bytes().decode("utf-8")  # line breaks as written


def test_findings_of_the_buffer_are_published_with_code_and_rule_link(tmp_path, server):
    # On disk the file is clean: the server must analyse what the editor holds.
    path = write(tmp_path, "model_eval.py", CLEAN)
    client = server()
    uri = client.open(path, BUGGY)
    published = client.diagnostics(uri, 1)
    by_code = {diagnostic.code: diagnostic for diagnostic in published.diagnostics}
    assert sorted(by_code) == ["SF106", "SF203"]
    anomaly = by_code["SF203"]
    assert anomaly.source == "stabfix"
    assert anomaly.code_description.href == rule_url("SF203", "anomaly-detection-left-on")
    assert anomaly.range == types.Range(types.Position(2, 0), types.Position(2, 39))
    assert "set_detect_anomaly" in anomaly.message
    assert anomaly.severity in (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)
    assert by_code["SF106"].code_description.href == rule_url("SF106", "eval-without-no-grad")
    assert client.stop() == 0


def test_a_change_that_removes_the_bugs_clears_the_diagnostics(tmp_path, server):
    path = write(tmp_path, "model_eval.py", BUGGY)
    client = server()
    uri = client.open(path, BUGGY)
    assert len(client.diagnostics(uri, 1).diagnostics) == 2
    client.change(uri, 2, CLEAN)
    assert list(client.diagnostics(uri, 2).diagnostics) == []
    client.change(uri, 3, BUGGY)
    assert [diagnostic.code for diagnostic in client.diagnostics(uri, 3).diagnostics] == ["SF203", "SF106"]
    # An incremental change, as editors send: delete the line that turns anomaly detection on.
    client.change(uri, 4, "", at=types.Range(types.Position(2, 0), types.Position(3, 0)))
    (left,) = client.diagnostics(uri, 4).diagnostics
    assert left.code == "SF106" and left.range.start.line == 8  # `model(x)`, one line up from where it was
    assert client.stop() == 0


def test_a_syntax_error_while_typing_clears_the_diagnostics_and_is_logged(tmp_path, server):
    path = write(tmp_path, "model_eval.py", BUGGY)
    client = server()
    uri = client.open(path, BUGGY)
    assert len(client.diagnostics(uri, 1).diagnostics) == 2
    client.change(uri, 2, BUGGY.replace("def evaluate(model, loader):", "def evaluate(model, loader"))
    assert list(client.diagnostics(uri, 2).diagnostics) == []  # none left at positions that no longer hold
    logged = [
        message["params"]["message"] for message in client.notifications if message["method"] == "window/logMessage"
    ]
    assert any("model_eval.py: syntax error at line" in message for message in logged), logged


def test_other_files_come_from_disk_and_their_changes_are_seen(tmp_path, server):
    # SF413 fires only when `BaseModel`, defined in another file, is an nn.Module.
    write(tmp_path, "models/__init__.py", "")
    base = write(tmp_path, "models/base.py", "import torch.nn as nn\n\n\nclass BaseModel(nn.Module):\n    pass\n")
    net = textwrap.dedent(
        """\
        import torch.nn as nn

        from .base import BaseModel


        class MoE(BaseModel):
            def __init__(self, d, n):
                super().__init__()
                self.experts = [nn.Linear(d, d) for _ in range(n)]
        """
    )
    client = server()
    uri = client.open(write(tmp_path, "models/net.py", net), net)
    assert [diagnostic.code for diagnostic in client.diagnostics(uri, 1).diagnostics] == ["SF413"]
    base.write_text("class BaseModel:\n    pass\n")
    client.files_changed(base)
    assert list(client.diagnostics(uri, 1).diagnostics) == []
    assert client.stop() == 0


def test_columns_count_utf16_units_and_crlf_text_is_fixed_like_apply(tmp_path, server, run_cli):
    # An emoji before the finding is two UTF-16 units (the protocol's default) but one character.
    text = 'import torch\r\n\r\nlabel = "\U0001F600"; torch.autograd.set_detect_anomaly(True)\r\n'
    client = server()
    uri = client.open(write(tmp_path, "model_eval.py", text), text)
    (finding,) = client.diagnostics(uri, 1).diagnostics
    assert finding.code == "SF203"
    assert finding.range == types.Range(types.Position(2, 14), types.Position(2, 53))
    (unsafe,) = client.code_actions(uri, finding.range, only=[types.CodeActionKind.QuickFix])
    fixed = apply_edits(text, only_edit(unsafe, uri, 1))
    assert fixed == applied_by_cli(run_cli, tmp_path, text, "--unsafe-fixes")
    assert fixed.count("\r\n") == fixed.count("\n")
    assert client.stop() == 0


def test_rapid_changes_are_debounced_into_one_analysis(tmp_path, server):
    path = write(tmp_path, "model_eval.py", CLEAN)
    client = server({"debounceMs": 1000})
    uri = client.open(path, CLEAN)
    assert list(client.diagnostics(uri, 1).diagnostics) == []
    for version in (2, 3, 4):  # typing: each change well inside the 1 s pause
        client.change(uri, version, BUGGY[: len(BUGGY) * version // 4])
    client.change(uri, 5, BUGGY)
    assert len(client.diagnostics(uri, 5).diagnostics) == 2
    # Messages come in order: a check of an older version would have been published before this one.
    assert client.published_versions(uri, quiet_for=0.2) == [1, 5]
    assert client.stop() == 0


def test_quick_fixes_make_the_edit_apply_makes(tmp_path, server, run_cli):
    path = write(tmp_path, "model_eval.py", BUGGY)
    client = server()
    uri = client.open(path, BUGGY)
    by_code = {diagnostic.code: diagnostic for diagnostic in client.diagnostics(uri, 1).diagnostics}

    (safe,) = client.code_actions(uri, by_code["SF106"].range, only=[types.CodeActionKind.QuickFix])
    assert safe.kind == types.CodeActionKind.QuickFix and safe.is_preferred is True
    assert safe.title.startswith("Fix SF106") and "(unsafe)" not in safe.title
    assert [diagnostic.code for diagnostic in safe.diagnostics] == ["SF106"]
    # Only what changes is edited (the editor keeps the cursor, the undo step is the fix's): one line added.
    (edit,) = only_edit(safe, uri, 1)
    assert edit.range == types.Range(types.Position(5, 0), types.Position(5, 0))
    assert edit.new_text == "@torch.no_grad()\n"
    fixed = apply_edits(BUGGY, [edit])
    assert fixed == applied_by_cli(run_cli, tmp_path, BUGGY, "--select", "SF106")

    (unsafe,) = client.code_actions(uri, by_code["SF203"].range, only=[types.CodeActionKind.QuickFix])
    assert not unsafe.is_preferred and unsafe.title.endswith("(unsafe)")
    fixed = apply_edits(BUGGY, only_edit(unsafe, uri, 1))
    assert fixed == applied_by_cli(run_cli, tmp_path, BUGGY, "--unsafe-fixes", "--select", "SF203")
    assert fixed != BUGGY
    assert client.stop() == 0


def test_fix_all_source_action_is_what_apply_does(tmp_path, server, run_cli):
    path = write(tmp_path, "model_eval.py", BUGGY)
    client = server()
    uri = client.open(path, BUGGY)
    client.diagnostics(uri, 1)
    whole = types.Range(types.Position(0, 0), types.Position(len(BUGGY.splitlines()), 0))
    (fix_all,) = client.code_actions(uri, whole, only=["source.fixAll"])
    assert fix_all.kind == "source.fixAll.stabfix" and fix_all.title == "Fix all safe stabfix findings"
    fixed = apply_edits(BUGGY, only_edit(fix_all, uri, 1))
    # Safe fixes only: the SF203 line stays, as with a plain `stabfix apply`.
    assert fixed == applied_by_cli(run_cli, tmp_path, BUGGY)
    assert "set_detect_anomaly(True)" in fixed and "@torch.no_grad()" in fixed
    # Asked for all kinds over the whole file: both quick fixes and the source action.
    kinds = sorted(action.kind for action in client.code_actions(uri, whole))
    assert kinds == ["quickfix", "quickfix", "source.fixAll.stabfix"]
    assert client.stop() == 0


def test_the_config_of_the_files_project_applies(tmp_path, server):
    config = "ignore: [SF203]\nper-file-ignores:\n  'legacy/*.py': [SF106]\nexclude: ['vendored/']\n"
    write(tmp_path, "stabfix.yaml", config)
    client = server()
    uri = client.open(write(tmp_path, "model_eval.py", BUGGY), BUGGY)
    assert [diagnostic.code for diagnostic in client.diagnostics(uri, 1).diagnostics] == ["SF106"]
    uri = client.open(write(tmp_path, "legacy/old_eval.py", BUGGY), BUGGY)
    assert list(client.diagnostics(uri, 1).diagnostics) == []
    uri = client.open(write(tmp_path, "vendored/eval.py", BUGGY), BUGGY)
    assert list(client.diagnostics(uri, 1).diagnostics) == []
    assert client.stop() == 0


def test_target_torch_of_the_files_project_withholds_newer_fixes(tmp_path, server):
    amp = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"  # SF302; its fix needs torch 2.3
    client = server()
    for project, offered in (("old", 0), ("new", 1)):
        write(tmp_path, f"{project}/stabfix.yaml", f'target-torch: "{"2.1" if project == "old" else "2.4"}"\n')
        uri = client.open(write(tmp_path, f"{project}/train.py", amp), amp)
        (finding,) = client.diagnostics(uri, 1).diagnostics
        assert finding.code == "SF302"
        assert len(client.code_actions(uri, finding.range, only=[types.CodeActionKind.QuickFix])) == offered, project
    assert client.stop() == 0


def test_each_fixture_file_gets_what_scan_of_its_project_reports(server, run_cli):
    """The bundled training repos, each with its own config: what the editor shows is what `scan` says."""
    client = server()
    folders = sorted(path for path in (REPO / "fixtures").iterdir() if path.is_dir())
    for folder in folders:  # one scan each: each fixture has its own config
        report = json.loads(run_cli("scan", "--no-cache", "--output-format", "json", str(folder)).stdout)
        expected = {
            (REPO / finding["path"], finding["code"], finding["line"], finding["column"]) for finding in report["findings"]
        }
        shown = set()
        for path in sorted(folder.rglob("*.py")):
            uri = client.open(path, path.read_text(encoding="utf-8"))
            for diagnostic in client.diagnostics(uri, 1).diagnostics:
                start = diagnostic.range.start
                shown.add((path, diagnostic.code, start.line + 1, start.character + 1))
        assert shown == expected, folder.name
        assert expected, f"{folder.name}: a fixture has planted bugs"
    assert client.stop() == 0


def test_a_broken_config_is_shown_once_and_no_rule_runs(tmp_path, server):
    write(tmp_path, "stabfix.yaml", "select: [SF9999]\n")
    client = server()
    for name in ("a.py", "b.py"):
        uri = client.open(write(tmp_path, name, BUGGY), BUGGY)
        assert list(client.diagnostics(uri, 1).diagnostics) == []
    shown = [message["params"] for message in client.notifications if message["method"] == "window/showMessage"]
    assert len(shown) == 1 and "stabfix.yaml" in shown[0]["message"] and "SF9999" in shown[0]["message"]
    assert shown[0]["type"] == types.MessageType.Error
    assert client.stop() == 0


def test_without_pygls_the_command_says_how_to_install_it(tmp_path, run_cli):
    # An installed-but-broken pygls is as good as a missing one for this: its import fails.
    write(tmp_path, "blocked/pygls/__init__.py", "raise ImportError('pygls blocked for this test', name='pygls')\n")
    paths = [str(tmp_path / "blocked"), os.environ.get("PYTHONPATH", "")]
    result = run_cli("server", env={"PYTHONPATH": os.pathsep.join(path for path in paths if path)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ['error: the language server needs pygls: pip install "stabfix[lsp]"']
    assert "Traceback" not in result.stderr and result.stdout == ""
