"""What the model asks of the other files of a scan, as a protocol: `stabfix.project` builds the models
of other files, so the model may not import it; it only names the questions it asks (a `ProjectView`
of `stabfix.project` answers them)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Protocol, TypeVar

import libcst as cst

T = TypeVar("T")


class ForeignDefinition(Protocol):
    """A def or class of another scanned file, with that file's model and module."""

    node: Any  # cst.FunctionDef | cst.ClassDef
    model: Any  # that file's FileModel
    module: cst.Module
    symbol: Any  # its `Symbol` (`.qualified`, `.kind`, `.path`)


class ProjectQueries(Protocol):
    def resolve(self, qualified: str) -> Optional[Any]:
        """Where a name this file's imports spell is defined in the tree (a `Symbol`: `.kind`, `.qualified`)."""

    def absolute(self, qualified: str, importer: str) -> Optional[str]:
        """A name as the file `importer` spells it (`..utils.f`), made absolute (`pkg.utils.f`)."""

    def imported_models(self, ask: Callable[[Any], Optional[T]], needs: Iterable[str] = ()) -> list[T]:
        """What `ask` says of the model of each module of the tree this file imports (node-free answers)."""

    def lineage(self, qualified: str) -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
        """The class and its ancestors, each with its own methods, nearest first."""

    def foreign(
        self, qualified: str, ask: Callable[[ForeignDefinition], Optional[T]], needs: Iterable[str] = (),
        kinds: Iterable[str] = ("def", "class", "method"),
    ) -> Optional[T]:
        """What `ask` says about the definition `qualified` names in another file (None when unknown, or
        when its kind is not in `kinds`)."""

    def foreign_hook(
        self, ask: Callable[[ForeignDefinition], Optional[T]], needs: Iterable[str] = (),
        kinds: Iterable[str] = ("def", "class", "method"),
    ) -> Callable[[str], Optional[T]]:
        """`foreign(qualified_name) -> answer | None`, the hook a part takes."""
