"""When each open document is analysed: at once on open and save, after a pause in typing on change
(a new change restarts the wait), at most one pending check per document."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable


class Debouncer:
    def __init__(self, check: Callable[[str], Awaitable[None]]) -> None:
        self._check = check
        self._pending: dict[str, asyncio.Task] = {}

    def schedule(self, uri: str, delay: float) -> None:
        """Check `uri` after `delay` seconds, instead of any check of it still waiting or running."""
        self.cancel(uri)
        self._pending[uri] = asyncio.ensure_future(self._later(uri, delay))

    def cancel_all(self) -> None:
        for uri in list(self._pending):
            self.cancel(uri)

    def cancel(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _later(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            await self._check(uri)
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]
