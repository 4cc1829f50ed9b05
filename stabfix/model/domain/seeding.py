"""Whether the run a file starts is seeded: a fact of call targets, never of a text search.

`run_is_seeded(randomness, project)` says yes when one of these holds, of the code the run reaches
(module-level code and the functions and classes it refers to, `randomness.reached`):
- the file calls a seeding API (`randomness.seeds()`: `torch.manual_seed`, `random.seed`,
  `np.random.seed`, `transformers.set_seed`, Lightning's `seed_everything`, accelerate's `set_seed`...,
  each resolved through the imports and their aliases);
- it calls a function or class of another scanned file that does, itself or through the functions of
  further scanned files it calls (`MAX_FILES` files down; the project index resolves each call);
- it imports a module of the tree that seeds at module level (seeding when imported);
- it calls a function imported from a module the scan does not show (an installed package, a file
  left out) whose name speaks of seeding (`from mytools.repro import set_global_seed`), or a
  `self.<method>` named so in a class whose base comes from such a module. What such code does is
  not visible; the import is resolved, and only then does the name break the tie, towards silence: a
  rule that reports an unseeded run on a seeded one loses the user's trust.
A function of this file or of a scanned file that is named for seeding but seeds nothing does not count.
"""

from __future__ import annotations

import re
from typing import Optional

from stabfix.model.domain.randomness import Randomness, RandomCall
from stabfix.model.source.project_view import ForeignDefinition, ProjectQueries

MAX_FILES = 3  # scanned files followed below the one that calls
_SEED_WORD = re.compile(r"seed", re.IGNORECASE)
_NEEDS = ("randomness",)


def run_is_seeded(randomness: Randomness, project: Optional[ProjectQueries]) -> bool:
    """Only calls the run reaches count (`randomness.reached`): a seeding function that nothing calls
    seeds nothing."""
    if any(randomness.reached(call) for call in randomness.seeds()):
        return True
    if any(_seeds(qualified, project, 0, set()) for call, qualified in randomness.project_calls() if randomness.reached(call)):
        return True
    if any(_inherited_seeding(call, bases, project) for call, bases in randomness.inherited_calls() if randomness.reached(call)):
        return True
    return project is not None and any(project.imported_models(_seeds_at_import, needs=_NEEDS))


def seeding_elsewhere(qualified: str, project: Optional[ProjectQueries]) -> bool:
    """The definition `qualified` names in another scanned file seeds (itself or further down)."""
    return project is not None and project.resolve(qualified) is not None and _seeds(qualified, project, 0, set())


def _seeds(qualified: str, project: Optional[ProjectQueries], depth: int, seen: set[str]) -> bool:
    if qualified in seen or depth > MAX_FILES:
        return False
    seen.add(qualified)
    if project is None or project.resolve(qualified) is None:
        return _named_for_seeding(qualified)  # not shown by the scan: the tie-break
    found = project.foreign(qualified, _what_it_runs, needs=_NEEDS, kinds=("def", "class", "method"))
    if found is None:
        return False
    seeds_here, onward, importer = found
    if seeds_here:
        return True
    for called in onward:
        absolute = project.absolute(called, importer)
        if absolute is not None and _seeds(absolute, project, depth + 1, seen):
            return True
    return False


def _what_it_runs(definition: ForeignDefinition) -> tuple[bool, tuple[str, ...], str]:
    """Node-free: whether the definition seeds in its own file, the names it calls from other modules
    (as its file spells them), and its file, which those names are relative to."""
    randomness = definition.model.randomness
    node = definition.node
    onward = tuple(q for call, q in randomness.project_calls() if any(owner is node for owner in call.owners))
    return bool(randomness.within(node, "seed")), onward, definition.symbol.path


def _seeds_at_import(model) -> bool:
    return any(not call.owners for call in model.randomness.seeds())


def _inherited_seeding(call: RandomCall, bases: tuple[str, ...], project: Optional[ProjectQueries]) -> bool:
    """`self.set_seed(...)` in a class whose base is imported: its method, or the tie-break when unseen."""
    method = call.what.rsplit(".", 1)[-1]
    for base in bases:
        if project is not None and project.resolve(base) is not None:
            if _seeds(f"{base}.{method}", project, 0, set()):
                return True
        elif _named_for_seeding(method):
            return True
    return False


def _named_for_seeding(qualified: str) -> bool:
    return bool(_SEED_WORD.search(qualified.rsplit(".", 1)[-1]))
