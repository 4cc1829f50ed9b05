"""Loaded by every Python process that `stabfix verify -- COMMAND` starts (this folder is put first on
PYTHONPATH). Not a package: Python's `site` imports it by name at startup.

It chains to the environment's own sitecustomize, then (only when the parent armed it through the
environment) loads stabfix's child side, which waits for `import torch` before doing anything: a
process that never imports torch pays one small import. It must never break the user's program.
"""

import os
import sys


def _chain_to_next_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import importlib.util

        if importlib.util.find_spec("sitecustomize") is not None:
            import sitecustomize  # noqa: F401 - the environment's own, run as it would have been
    except Exception:  # noqa: BLE001 - a broken sitecustomize behaves as Python would: it is reported
        import traceback

        traceback.print_exc()
    finally:
        if "sitecustomize" not in sys.modules and ours is not None:
            sys.modules["sitecustomize"] = ours


def _arm() -> None:
    stabfix_parent = os.environ.get("STABFIX_VERIFY_STABFIX")
    if not os.environ.get("STABFIX_VERIFY_EVENTS") or not stabfix_parent:
        return
    added = stabfix_parent not in sys.path
    if added:
        sys.path.append(stabfix_parent)  # last: the user's own modules keep resolving first
    try:
        from stabfix.verify import command_child

        command_child.install()
    except Exception as exc:  # noqa: BLE001 - stabfix's failure must not stop the user's program
        sys.stderr.write(f"stabfix verify: instrumentation not loaded: {type(exc).__name__}: {exc}\n")
    finally:
        if added:
            try:
                sys.path.remove(stabfix_parent)
            except ValueError:
                pass


_chain_to_next_sitecustomize()
_arm()
