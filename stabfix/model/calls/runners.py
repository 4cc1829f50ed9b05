"""Runners built for the CPU: an object that places a run's batches and models, built so that it places
them on the host.

- `cpu_runner(call, qualify)`: what a constructor call builds for the CPU, or None: accelerate's
  `Accelerator(cpu=True)` or Lightning Fabric's `Fabric(accelerator="cpu")` ("framework": what it
  prepares stays on the host), a Lightning `Trainer(accelerator="cpu")` ("trainer": what it fits runs on
  the host). The callee is resolved through the imports and aliases; the setting is the literal `True`
  or `"cpu"` (a setting from a config is not judged: not built for the CPU as far as the code shows);
- `cpu_runners(calls, qualify, project)`: the kinds built by the given calls of a file, or by a
  function or class of another scanned file that one of them calls (one file down, through the project
  index: `accelerator = make_accelerator()` of `setup.py`, `fit(model, data)` of `engine.py` that builds
  the CPU trainer). A runner handed in from outside the scan is unknown, never assumed.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterable, Optional

import libcst as cst

from stabfix.model.source.project_view import ProjectQueries
from stabfix.model.source.node_fields import code_children

Qualify = Callable[[cst.BaseExpression], Optional[str]]

FRAMEWORKS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator", "lightning.Fabric",
                        "lightning.fabric.Fabric", "lightning_fabric.Fabric"})
TRAINERS = frozenset({"lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer"})


def cpu_runner(call: cst.Call, qualify: Qualify) -> Optional[str]:
    """"framework" or "trainer" when the call builds one for the CPU (module docstring), else None."""
    built = qualify(call.func) or ""
    if built in FRAMEWORKS and any(_cpu_setting(arg, ("cpu", "accelerator")) for arg in call.args):
        return "framework"
    if built in TRAINERS and any(_cpu_setting(arg, ("accelerator",)) for arg in call.args):
        return "trainer"
    return None


def cpu_runners(calls: Iterable[cst.Call], qualify: Qualify, project: Optional[ProjectQueries]) -> frozenset[str]:
    found: set[str] = set()
    for call in calls:
        kind = cpu_runner(call, qualify)
        if kind is not None:
            found.add(kind)
            continue
        qualified = qualify(call.func)
        if project is not None and qualified is not None and project.resolve(qualified) is not None:
            found |= project.foreign(qualified, _built_within, kinds=("def", "class", "method")) or frozenset()
    return frozenset(found)


# what `_built_within` found per definition node (the node kept, so its id cannot be reused while kept): a
# helper is asked about at each of its calls, by each file that calls it, and its whole body is walked
_BUILT: OrderedDict[int, tuple[cst.CSTNode, frozenset[str]]] = OrderedDict()
_BUILT_KEPT = 512


def _built_within(definition) -> frozenset[str]:
    """Node-free: the CPU runners a function or class of another file builds."""
    kept = _BUILT.get(id(definition.node))
    if kept is not None and kept[0] is definition.node:
        _BUILT.move_to_end(id(definition.node))
        return kept[1]
    found = _walked_for_runners(definition)
    _BUILT[id(definition.node)] = (definition.node, found)
    while len(_BUILT) > _BUILT_KEPT:
        _BUILT.popitem(last=False)
    return found


def _walked_for_runners(definition) -> frozenset[str]:
    qualify = definition.model.imports.qualify
    stack: list[cst.CSTNode] = [definition.node]
    found: set[str] = set()
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:  # exact (libcst has no subclass of Call): an ABC isinstance costs more per node
            kind = cpu_runner(node, qualify)
            if kind is not None:
                found.add(kind)
        stack.extend(code_children(node))  # a runner is a call: no trivia looked at
    return frozenset(found)


def _cpu_setting(arg: cst.Arg, keywords: tuple[str, ...]) -> bool:
    if arg.keyword is None or arg.keyword.value not in keywords:
        return False
    value = arg.value
    if arg.keyword.value == "cpu":
        return type(value) is cst.Name and value.value == "True"
    return type(value) is cst.SimpleString and value.evaluated_value == "cpu"
