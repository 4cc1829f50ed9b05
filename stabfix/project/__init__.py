"""The project layer: what one file's analysis may know about the other files of the same scan.

- `modules.ModuleMap`    module name <-> file, from the file list alone
- `outline.Outline`      a file's top-level bindings from CPython's `ast` (imports, defs, classes with bases)
- `index.ProjectIndex`   qualified names resolved across the tree (re-exports, relative and star imports),
                         class ancestors; records what each answer consulted (`Consulted`) for the cache
- `definitions.Project`  the index plus other files' models, built lazily; `Project.view(path)` is the
                         `ProjectView` one file's analysis gets (`definition`, `foreign`, `foreign_hook`)

See docs/model.md, "Project layer".
"""

from stabfix.project.definitions import Definition, Project, ProjectView
from stabfix.project.index import Consulted, ProjectIndex, Symbol

__all__ = ["Consulted", "Definition", "Project", "ProjectIndex", "ProjectView", "Symbol"]
