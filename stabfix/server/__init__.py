"""`stabfix server`: a Language Server (stdio) for editors, built on pygls, an optional dependency
(`pip install "stabfix[lsp]"`).

Modules, one job each: settings (what the file's config says for it), analysis (a buffer through the
engine, cached), positions, diagnostics, edits and actions (LSP shapes), scheduler (debouncing), app
(the protocol handlers)."""

from __future__ import annotations

INSTALL_HINT = 'the language server needs pygls: pip install "stabfix[lsp]"'
_PROVIDED_BY_EXTRA = ("pygls", "lsprotocol", "cattrs", "attrs")


class ServerUnavailable(Exception):
    """pygls (or what it needs) is not installed; the message says how to get it."""


def serve_stdio() -> None:
    """Serve one editor over stdin/stdout until it says exit. Raises ServerUnavailable."""
    try:
        from stabfix.server.app import build_server
    except ImportError as error:
        if (error.name or "").split(".")[0] in _PROVIDED_BY_EXTRA:
            raise ServerUnavailable(INSTALL_HINT) from None
        raise
    build_server().start_io()
