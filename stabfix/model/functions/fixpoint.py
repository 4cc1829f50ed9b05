"""One half of the function summaries (`returns.py`, `effects.py`), built bottom-up over the call graph on
demand, with its own fixpoint for recursion: a call back into a function being built sees what is known
of it so far (nothing, at first), and the function is built again until that stops changing (at most
`MAX_ROUNDS` times; else it is taken as it stands, `converged=False`). A chain of calls deeper than
`4 * MAX_DEPTH` is cut where it stands (asked from nearer, it is not). What read a half still being
built is provisional: kept only until the function it depended on is final, then built again when asked."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Generic, TypeVar

import libcst as cst

MAX_DEPTH = 8  # calls followed below a function before its facts are cut
MAX_ROUNDS = 6  # re-summaries of a recursive function before its summary is taken as it stands

Half = TypeVar("Half")  # a frozen dataclass with a `converged` field


@dataclass
class Frame:
    function: cst.FunctionDef
    provisional: bool = False  # read a half still being built (recursion): not final yet
    depth: int = 0  # deepest call level its return facts used


class Fixpoint(Generic[Half]):
    """Memoised `build(function, frame)` results, per function, with the recursion handled as above."""

    def __init__(self, build: Callable[[cst.FunctionDef, Frame], Half], empty: Half) -> None:
        self._build = build
        self._empty = empty
        self._final: dict[cst.FunctionDef, Half] = {}
        self._provisional: dict[cst.FunctionDef, Half] = {}
        self._approximate: dict[cst.FunctionDef, Half] = {}
        self.stack: list[Frame] = []
        self._recursive: set[cst.FunctionDef] = set()

    def of(self, function: cst.FunctionDef) -> Half:
        done = self._final.get(function)
        if done is not None:
            return done
        done = self._provisional.get(function)
        if done is not None:
            if self.stack:
                self.stack[-1].provisional = True
            return done
        active = [frame.function for frame in self.stack]
        if function in active:  # recursion: what is known so far
            for frame in self.stack[active.index(function) + 1:]:
                frame.provisional = True
            self._recursive.add(function)
            return self._approximate.get(function) or self._empty
        if len(self.stack) > 4 * MAX_DEPTH:  # a chain this long is cut; asked from nearer, it is not
            self.stack[-1].provisional = True
            return self._empty
        built, provisional = self._once(function)
        rounds = 1
        while function in self._recursive and built != self._approximate.get(function) and rounds < MAX_ROUNDS:
            self._approximate[function] = built
            self._provisional.clear()
            built, provisional = self._once(function)
            rounds += 1
        if function in self._recursive and built != self._approximate.get(function):
            built = replace(built, converged=False)  # type: ignore[type-var]
        if provisional:
            self._provisional[function] = built
            if self.stack:
                self.stack[-1].provisional = True
        else:
            self._final[function] = built
            self._provisional.clear()  # what depended on a function being built is built again when asked
        return built

    @property
    def built(self) -> dict[cst.FunctionDef, Half]:
        """The functions whose half is final."""
        return self._final

    def _once(self, function: cst.FunctionDef) -> tuple[Half, bool]:
        frame = Frame(function)
        self.stack.append(frame)
        try:
            built = self._build(function, frame)
        finally:
            self.stack.pop()
        return built, frame.provisional

