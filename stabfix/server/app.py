"""The language server: open Python files' findings as diagnostics, their fixes as code actions.

Analyses run one at a time on a worker thread, so the server keeps reading the editor's messages (a
newer change cancels the wait for an older one); diagnostics are published only for the text they were
computed from."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from stabfix import __version__
from stabfix.engine import describe_error
from stabfix.server.actions import FIX_ALL_KIND, code_actions
from stabfix.server.analysis import Analyser, DocumentAnalysis
from stabfix.server.diagnostics import diagnostic
from stabfix.server.positions import lsp_lines
from stabfix.server.scheduler import Debouncer

DEFAULT_DEBOUNCE_MS = 300
# What other files' facts and the config come from.
WATCHED = ("**/*.py", "**/stabfix.yaml", "**/pyproject.toml")
T = TypeVar("T")


class StabfixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("stabfix", __version__)
        self.debounce_seconds = DEFAULT_DEBOUNCE_MS / 1000
        self.debouncer = Debouncer(self.check)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stabfix-analysis")
        self._analyser: Optional[Analyser] = None
        self._reported: dict[str, Optional[str]] = {}  # uri -> the problem last logged for it
        self._reported_configs: set[str] = set()

    def configure(self, params: types.InitializeParams) -> None:
        """What `initialize` tells: the workspace folders and the initialization options."""
        folders = [to_fs_path(folder.uri) for folder in self.workspace.folders.values()]
        roots = [folder for folder in [*folders, self.workspace.root_path] if folder]
        self._analyser = Analyser([Path(root) for root in roots])
        options = params.initialization_options
        debounce = options.get("debounceMs") if isinstance(options, dict) else None
        if debounce is None:
            return
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and debounce >= 0:
            self.debounce_seconds = debounce / 1000
        else:
            message = (
                "stabfix: initializationOptions.debounceMs must be a number of milliseconds >= 0, "
                f"got {debounce!r}; using {DEFAULT_DEBOUNCE_MS}"
            )
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    @property
    def analyser(self) -> Analyser:
        if self._analyser is None:
            raise RuntimeError("the client sent a document before initialize")
        return self._analyser

    async def on_worker(self, job: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, job)

    async def check(self, uri: str) -> None:
        """Analyse the document as it is now and publish its findings, unless it changed meanwhile."""
        path = _file_path(uri)
        if path is None or uri not in self.workspace.text_documents:
            return
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        try:
            result = await self.on_worker(lambda: self.analyser.analyse(path, text))
        except Exception as error:  # a stabfix bug: say so, keep serving the other files
            message = f"stabfix: {path}: internal error ({describe_error(error)}); please report it"
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))
            return
        if uri not in self.workspace.text_documents or self.workspace.get_text_document(uri).version != version:
            return  # a newer check is scheduled
        self._report_problem(uri, result)
        codec, lines = self.workspace.position_codec, lsp_lines(text)
        diagnostics = [diagnostic(codec, lines, item.finding) for item in result.findings]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        )

    def _report_problem(self, uri: str, result: DocumentAnalysis) -> None:
        """Say once why a document has no or only some findings: in the client's log, as a syntax error
        while typing is normal; a broken config, which the user must fix, as a message."""
        if self._reported.get(uri) == result.problem:
            return
        self._reported[uri] = result.problem
        if result.problem is None:
            return
        if result.problem_in_config:
            if result.problem not in self._reported_configs:  # one message per broken config, not per file
                self._reported_configs.add(result.problem)
                message = f"stabfix: {result.problem}"
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
            return
        message = f"stabfix: {result.path}: {result.problem}"
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    def stop_checking(self) -> None:
        """`shutdown`: drop the checks still waiting, so that `exit` is not held up by analyses nobody reads."""
        self.debouncer.cancel_all()
        self._worker.shutdown(wait=False, cancel_futures=True)

    def closed(self, uri: str) -> None:
        self.debouncer.cancel(uri)
        self._reported.pop(uri, None)
        path = _file_path(uri)
        if path is not None:
            self._worker.submit(self.analyser.forget, path)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def files_changed(self, saved: Optional[str] = None) -> None:
        """Files on disk changed (`saved` by the editor, or others the client watches), and with them what
        open files may see of the project or their config: check them all again (a cached result whose
        other files are unchanged is served at once)."""
        self._worker.submit(self.analyser.forget_project_files)
        for uri in list(self.workspace.text_documents):
            self.debouncer.schedule(uri, 0 if uri == saved else self.debounce_seconds)

    async def watch_files(self) -> None:
        """Ask the client to report changes to Python files and configs it does not have open."""
        capabilities = self.client_capabilities.workspace
        watched = capabilities.did_change_watched_files if capabilities else None
        if not (watched and watched.dynamic_registration):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
        registration = types.Registration(
            id="stabfix-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        await self.client_register_capability_async(types.RegistrationParams(registrations=[registration]))


def _file_path(uri: str) -> Optional[Path]:
    """Files on disk only: an unsaved buffer or a notebook cell has no project to place it in."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path and path.endswith(".py") else None  # what `scan` of a folder reads


def build_server() -> StabfixServer:
    server = StabfixServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: StabfixServer, params: types.InitializeParams) -> None:
        ls.configure(params)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: StabfixServer, params: types.InitializedParams) -> None:
        await ls.watch_files()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: StabfixServer, params: None) -> None:
        ls.stop_checking()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: StabfixServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: StabfixServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.debouncer.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: StabfixServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.debouncer.schedule(params.text_document.uri, ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: StabfixServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.files_changed(saved=params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: StabfixServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: StabfixServer, params: types.CodeActionParams) -> Optional[list[types.CodeAction]]:
        uri = params.text_document.uri
        path = _file_path(uri)
        if path is None or uri not in ls.workspace.text_documents:
            return None
        document = ls.workspace.get_text_document(uri)
        text = document.source
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=document.version)
        codec, lines = ls.workspace.position_codec, lsp_lines(text)
        capabilities = ls.client_capabilities.workspace
        versioned = bool(
            capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes
        )

        def compute() -> list[types.CodeAction]:
            result = ls.analyser.analyse(path, text)
            only = params.context.only
            return code_actions(ls.analyser, result, codec, lines, identifier, params.range, only, versioned)

        return await ls.on_worker(compute) or None

    return server
