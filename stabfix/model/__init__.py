"""Shared static-analysis helpers that checkers build on (name resolution, loss calls, data flow)."""
