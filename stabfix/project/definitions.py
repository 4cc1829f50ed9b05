"""Other files' models, built lazily, and the view of the project one file's analysis gets.

`Project` wraps the index with a small per-process cache of other files' `FileModel`s, each built (one
libcst parse, one traversal of the parts asked for) only when a query needs a definition of that file,
and kept per file and part set: a question is answered by a model built with exactly the parts it asked
for, or by a kept one with more parts none of which changes how the asked ones answer
(`stabfix.model.answers_alike`: `values` from a model built for `summaries`, never `losses`), and a
file built again for other parts reuses its kept tree.
`ProjectView` is what the engine hands one file's analysis (`CheckContext.project`, `FileModel.project`):
names are resolved as that file's imports spell them (`.models.Net`, `pkg.models.Net`), and every
answer is recorded in `consulted` for the cache.

A node of another file never reaches this file's parts: `foreign(qualified, ask, needs)` runs `ask` on
the other file's model and definition node and hands back only what `ask` returns, which must be
node-free (a kind, a summary, a text). The other file's model is built without a project of its own, so
following stops one file away (the stated depth limit: no chain of models across files, no cycle, and
the answer cannot depend on which file asked first).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Optional, TypeVar, Union

from stabfix.project.index import Consulted, ProjectIndex, Symbol

if TYPE_CHECKING:  # loaded when the first other file's model is built: a scan served from the cache never parses
    import libcst as cst

    from stabfix.model import FileModel

T = TypeVar("T")
# Other files' models and parsed files kept per process (a worker's cache; rebuilt when evicted), the scanned
# files' trees included: the libcst parse is most of a model's build, and a file is often asked about (by its
# neighbours, under other parts) before or after its own scan. Each is bounded by count and by the source
# characters it holds (a tree takes ~60 bytes a character): on the bench corpus 128 keep every model a
# later question asks for again (32 rebuilt a third of them), for ~60 MB more.
_MODELS_KEPT = 128
_MODULES_KEPT = 128
_CHARACTERS_KEPT = 4_000_000
Defined = Union["cst.FunctionDef", "cst.ClassDef"]
DEFINED_KINDS = ("def", "class", "method")  # the symbols `definition` can hand over


@dataclass(frozen=True)
class Definition:
    """A def or class of another scanned file, with that file's model (built with the parts asked for)."""

    symbol: Symbol
    path: str
    model: FileModel
    node: Defined
    module: cst.Module


class Project:
    """The index plus the other files' models; one per process, shared by the files it analyses."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self._models: OrderedDict[tuple[str, frozenset], Optional[tuple[cst.Module, FileModel]]] = OrderedDict()
        self._modules: OrderedDict[str, tuple[str, cst.Module]] = OrderedDict()
        self._module_characters = 0  # the source characters behind the kept trees
        self._model_sizes: dict[tuple[str, frozenset], int] = {}  # the source characters behind each kept model
        # per file: a kept tree and the definition nodes found in it (`_find`) by qualified name; dropped with the
        # file's tree or models, so that it keeps no tree alive
        self._nodes: dict[str, tuple[cst.Module, dict[str, Optional[Defined]]]] = {}
        self._asked: dict[frozenset, None] = {}  # the part sets asked for so far, in order
        # models dropped from the cache so far: a model's facts refer to each other, so only the cyclic
        # collector frees a dropped one (stabfix.scan_runner decides when, from this count)
        self.models_dropped = 0

    def __getstate__(self) -> dict:
        return {"index": self.index}

    def __setstate__(self, state: dict) -> None:
        self.index = state["index"]
        self._models = OrderedDict()
        self._modules = OrderedDict()
        self._module_characters = 0
        self._model_sizes = {}
        self._nodes = {}
        self._asked = {}
        self.models_dropped = 0

    def parsed(self, path: str, text: str, parse: Callable[[str], cst.Module]) -> cst.Module:
        """`parse(text)`, or the tree kept from an earlier parse of the same text of `path` (libcst trees are
        immutable, so the scan of a file and other files' questions about it can share one). What `parse`
        raises is raised, and nothing is kept."""
        path = os.path.abspath(path)
        kept = self._modules.get(path)
        if kept is not None and kept[0] == text:
            self._modules.move_to_end(path)
            return kept[1]
        module = parse(text)
        if kept is not None:
            self._module_characters -= len(kept[0])
        self._modules[path] = (text, module)
        self._modules.move_to_end(path)
        self._module_characters += len(text)
        while len(self._modules) > _MODULES_KEPT or (len(self._modules) > 1 and self._module_characters > _CHARACTERS_KEPT):
            evicted_path, (evicted, _) = self._modules.popitem(last=False)
            self._module_characters -= len(evicted)
            self._nodes.pop(evicted_path, None)
        return module

    def node_of(self, module: cst.Module, symbol: Symbol) -> Optional[Defined]:
        """`_find(module, symbol)`, kept while its file's tree is (asked again at every call of another file's
        function, under every part set)."""
        kept = self._nodes.get(symbol.path)
        if kept is None or kept[0] is not module:
            kept = self._nodes[symbol.path] = (module, {})
        if symbol.qualified not in kept[1]:
            kept[1][symbol.qualified] = _find(module, symbol)
        return kept[1][symbol.qualified]

    def view(self, path: str, on_parsed: Optional[Callable[[], None]] = None) -> "ProjectView":
        """`on_parsed` is called once the file's own tree is at hand (parsed, or kept from an earlier parse)."""
        return ProjectView(self, path, on_parsed)

    def model_of(self, path: str, needs: Iterable[str]) -> Optional[tuple[cst.Module, FileModel]]:
        """The file parsed and traversed with the parts `needs` (and what they read); None when it does
        not parse or a part fails on it."""
        from stabfix.model import required_parts

        text = self.index.text(path)  # recorded, also when the model comes from the cache
        if text is None:
            return None
        # these parts, or more that change none of their answers: a part may read another that is built only
        # on request (`summaries` hands `losses` what the calls pass for a parameter), so a model built with
        # more parts could answer a question otherwise than the one asked for, and the answer would hang on
        # which question came first
        key = (path, frozenset(required_parts(needs)))
        self._asked[key[1]] = None
        if key not in self._models:
            key = self._answering_alike(path, key[1]) or key
        if key in self._models:
            self._models.move_to_end(key)
            return self._models[key]
        built, riders = self._build(path, text, key[1])
        for parts, kept in ((key[1], built), *riders.items()):
            self._models[(path, parts)] = kept
            self._model_sizes[(path, parts)] = len(text)
        kept_characters = sum(self._model_sizes.values())
        while len(self._models) > _MODELS_KEPT or (len(self._models) > 1 and kept_characters > _CHARACTERS_KEPT):
            evicted, dropped = self._models.popitem(last=False)
            kept_characters -= self._model_sizes.pop(evicted)
            self._nodes.pop(evicted[0], None)
            self.models_dropped += dropped is not None
        return built

    def _build(self, path: str, text: str, parts: frozenset) -> tuple[Optional[tuple[cst.Module, FileModel]], dict]:
        """The model of `parts`, and the models riding in its traversal (`_riders`) by their parts."""
        from stabfix.cst_parse import parse_source

        try:
            module = self._tree_of(path) or self.parsed(path, text, parse_source)
        except (RecursionError, MemoryError):
            return None, {}
        except Exception:  # a file that does not parse: unknown
            return None, {}
        riding = self._riders(path, parts)
        walked = _walked(module, parts, riding)
        if walked is None and riding:  # a part of a rider may fail where the model's own would not
            walked = _walked(module, parts, [])
        if walked is None:
            return None, {}
        model, riders = walked
        return (module, model), {asked: (module, rider) for asked, rider in riders.items()}

    def _riders(self, path: str, parts: frozenset) -> list[frozenset]:
        """The part sets asked for before (of other files) whose models can ride in the traversal of one
        built with `parts`, building only parts that traversal runs anyway (`losses` anew beside
        `summaries`, which rewires its own): a file asked about for one is often asked about for the
        other, and the second traversal is spared. Not one kept already, nor one `parts` answers alike."""
        from stabfix.model import answers_alike, built_riding

        found = []
        for asked in self._asked:
            if asked == parts or (path, asked) in self._models or answers_alike(parts, asked):
                continue
            own = built_riding(parts, asked)
            if own is not None and own <= parts:
                found.append(asked)
        return found

    def _answering_alike(self, path: str, parts: frozenset) -> Optional[tuple[str, frozenset]]:
        """The key of a kept model of `path` built with more parts that answers about `parts` as a model
        built with exactly them would (each other file is often asked about its `summaries` and its
        `values`: one traversal serves both)."""
        from stabfix.model import answers_alike

        return next((key for key, built in self._models.items()
                     if key[0] == path and built is not None and answers_alike(key[1], parts)), None)

    def _tree_of(self, path: str) -> Optional[cst.Module]:
        """The tree a kept model of `path` (built with other parts) was built from: not parsed again."""
        return next((built[0] for (kept, _), built in self._models.items() if kept == path and built is not None), None)


class ProjectView:
    """The project as one file (`path`) sees it."""

    def __init__(self, project: Project, path: str, on_parsed: Optional[Callable[[], None]] = None) -> None:
        self.project = project
        self._on_parsed = on_parsed
        self.index = project.index
        self.path = path
        self.consulted = Consulted()
        self._imported: Optional[list[str]] = None
        # what each name this file spells resolves to: asked again at every use (`resolve`, then `foreign`);
        # the first answer's consulted files and modules are in `consulted` already
        self._symbols: dict[str, Optional[Symbol]] = {}

    def _recorded(self, query: Callable[[], T]) -> T:
        with self.index.recording() as consulted:
            try:
                return query()
            finally:
                self.consulted.merge(consulted)

    def parsed(self, text: str, parse: Callable[[str], cst.Module]) -> cst.Module:
        """This file's tree: `parse(text)`, or the one kept from another file's question about it."""
        module = self.project.parsed(self.path, text, parse)
        if self._on_parsed is not None:
            self._on_parsed()
        return module

    @property
    def module_name(self) -> Optional[str]:
        return self.index.modules.name_of(self.path)

    def imported_texts(self) -> list[str]:
        """The texts of the tree's modules this file imports (read, not parsed), in path order."""

        def query() -> list[str]:
            texts = (self.index.text(path) for path in self.index.imported_files(self.path))
            return [text for text in texts if text is not None]

        if self._imported is None:
            self._imported = self._recorded(query)
        return self._imported

    def imports_scanned(self, spelled: Iterable[str]) -> bool:
        """Whether one of these module names, as the file's imports spell them (`pkg.x.f`, `..utils`), is a file
        of the scan, a name in one, or a package holding one (a module found outside the tree, or none, is not)."""

        def query() -> bool:
            for name in sorted(set(spelled)):
                target = self.index.absolute(name, self.path)
                if target and (self.index.scanned_module_of(target, self.path) is not None
                               or self.index.modules.holds_submodules(target, self.path)):
                    return True
            return False

        return self._recorded(query)

    def imported_models(self, ask: Callable[[FileModel], Optional[T]], needs: Iterable[str] = ()) -> list[T]:
        """What `ask` says of the model (built with `needs`) of each module of the tree this file imports,
        in path order; a file that does not parse, or on which `ask` fails, is left out. `ask` must
        return something node-free."""

        def query() -> list[T]:
            answers = []
            for path in self.index.imported_files(self.path):
                built = self.project.model_of(path, needs)
                try:
                    answer = ask(built[1]) if built is not None else None
                except (RecursionError, MemoryError):
                    answer = None
                except Exception:  # the other file's part failed on the question: unknown there
                    answer = None
                if answer is not None:
                    answers.append(answer)
            return answers

        return self._recorded(query)

    def absolute(self, qualified: str, importer: str) -> Optional[str]:
        """A name as the file `importer` spells it (`..utils.f`), made absolute (`pkg.utils.f`)."""
        return self.index.absolute(qualified, importer)

    def resolve(self, qualified: str) -> Optional[Symbol]:
        """Where a name this file's imports spell (`.models.Net`, `pkg.models.Net`) is defined in the tree."""
        if qualified in self._symbols:
            return self._symbols[qualified]
        return self._recorded(lambda: self._symbol(qualified))

    def _symbol(self, qualified: str) -> Optional[Symbol]:
        """`resolve`, inside a query already recorded (recordings are not nested: the index tells its
        recorders apart by what they hold)."""
        if qualified not in self._symbols:
            self._symbols[qualified] = self.index.resolve(qualified, self.path)
        return self._symbols[qualified]

    def ancestors(self, qualified: str) -> tuple[str, ...]:
        """The base classes of the class `qualified` names, transitively, nearest first (see
        `ProjectIndex.ancestors`); () when it is not a class of the tree."""

        def query() -> tuple[str, ...]:
            symbol = self._symbol(qualified)
            return self.index.ancestors(symbol) if symbol is not None and symbol.kind == "class" else ()

        return self._recorded(query)

    def lineage(self, qualified: str) -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
        """The class `qualified` names and its ancestors, each with its own methods (None outside the
        tree), nearest first; () when it is not a class of the tree."""

        def query() -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
            symbol = self._symbol(qualified)
            return self.index.lineage(symbol) if symbol is not None and symbol.kind == "class" else ()

        return self._recorded(query)

    def definition(
        self, qualified: str, needs: Iterable[str] = (), kinds: Iterable[str] = DEFINED_KINDS
    ) -> Optional[Definition]:
        """The def or class `qualified` names in another file of the tree, with that file's model built
        with the parts `needs`; None for anything outside the tree, unparsable, ambiguous or in this file
        (this file's own model answers for it), and for a symbol whose kind is not in `kinds` (that
        file's model is then not built)."""
        return self._recorded(lambda: self._definition(qualified, tuple(needs), tuple(kinds)))

    def _definition(self, qualified: str, needs: tuple[str, ...], kinds: tuple[str, ...]) -> Optional[Definition]:
        symbol = self._symbol(qualified)
        if symbol is None or symbol.kind not in kinds or symbol.path == os.path.abspath(self.path):
            return None
        built = self.project.model_of(symbol.path, needs)
        if built is None:
            return None
        module, model = built
        node = self.project.node_of(module, symbol)
        return Definition(symbol, symbol.path, model, node, module) if node is not None else None

    def foreign(
        self,
        qualified: str,
        ask: Callable[[Definition], Optional[T]],
        needs: Iterable[str] = (),
        kinds: Iterable[str] = DEFINED_KINDS,
    ) -> Optional[T]:
        """What `ask` says about the definition `qualified` names in another file (None when unknown).
        `ask` gets the other file's model and node and must return something node-free; `kinds`: the
        symbol kinds worth asking about (`("def", "method")`: a class is unknown, and its file not built)."""
        definition = self.definition(qualified, needs, kinds)
        if definition is None:
            return None
        try:
            return self._recorded(lambda: ask(definition))
        except (RecursionError, MemoryError):
            return None
        except Exception:  # the other file's part failed on a question: unknown there, not an error here
            return None

    def foreign_hook(
        self, ask: Callable[[Definition], Optional[T]], needs: Iterable[str] = (), kinds: Iterable[str] = DEFINED_KINDS
    ) -> Callable[[str], Optional[T]]:
        """`foreign(qualified_name) -> answer | None`, the hook a part takes (the summaries' `foreign`)."""
        wanted, asked = tuple(needs), tuple(kinds)
        return lambda qualified: self.foreign(qualified, ask, wanted, asked)


def _walked(module: cst.Module, parts: frozenset, riding: list[frozenset]) -> Optional[tuple[FileModel, dict]]:
    """A model of `parts` and one of each part set `riding`, built in one traversal; None when a part
    fails on the file."""
    from stabfix.model import FileModel
    from stabfix.model.source.traversal import walk

    try:
        model = FileModel(parts)
        riders = {asked: FileModel(asked, beside=model) for asked in riding}
        visitors = [*model.visitors(), *(visitor for rider in riders.values() for visitor in rider.visitors())]
        walk(module, visitors, parents=model.tree.parents)
    except (RecursionError, MemoryError):
        return None
    except Exception:  # a part that fails on the file: unknown
        return None
    return model, riders


def _find(module: cst.Module, symbol: Symbol) -> Optional[Defined]:
    """The one node defining `symbol` at the top level of its module (inside top-level `if`/`try` too)."""
    import libcst as cst

    parts = symbol.qualified[len(symbol.module) + 1 :].split(".")
    candidates = [node for node in _top_level_definitions(module.body) if node.name.value == parts[0]]
    if len(candidates) != 1:
        return None
    node = candidates[0]
    if len(parts) == 1:
        return node
    if type(node) is not cst.ClassDef or type(node.body) is not cst.IndentedBlock:
        return None
    methods = [item for item in node.body.body if type(item) is cst.FunctionDef and item.name.value == parts[1]]
    return methods[-1] if methods else None  # the last `def` of a name in a class body is the method


def _top_level_definitions(body) -> Iterable[Defined]:
    import libcst as cst

    for statement in body:
        if type(statement) in (cst.FunctionDef, cst.ClassDef):
            yield statement
        elif type(statement) is cst.If:
            yield from _top_level_definitions(statement.body.body)
            orelse = statement.orelse
            while orelse is not None:
                yield from _top_level_definitions(orelse.body.body)
                orelse = orelse.orelse if type(orelse) is cst.If else None
        elif type(statement) is cst.Try:
            yield from _top_level_definitions(statement.body.body)
            for handler in statement.handlers:
                yield from _top_level_definitions(handler.body.body)
            for extra in (statement.orelse, statement.finalbody):
                if extra is not None:
                    yield from _top_level_definitions(extra.body.body)
        elif type(statement) is cst.With:
            yield from _top_level_definitions(statement.body.body)
