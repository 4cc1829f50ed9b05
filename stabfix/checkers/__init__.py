"""One module per rule; every Checker subclass defined here is discovered by its `code`."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from stabfix.checker import Checker


@lru_cache(maxsize=1)
def checker_classes() -> dict[str, type[Checker]]:
    found: dict[str, type[Checker]] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Checker) and value is not Checker:
                if getattr(value, "__module__", None) == module.__name__ and hasattr(value, "code"):
                    found[value.code] = value
    return found
