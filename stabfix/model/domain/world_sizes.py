"""How many processes run: tests that hold only when one process runs the program, so no other rank exists.

`if world_size <= 1: torch.save(state, "rng.pth") else: torch.save(state, f"rng_{rank}.pth")` writes one file from
one process: a single-process run has no other rank to collide with. Asked through `single_process(node)`.

- `world_size(expr)`: whether an expression is the number of processes of the run: `dist.get_world_size()`,
  `os.environ["WORLD_SIZE"]` (also through `int(...)`, `.get(...)`), accelerate's `num_processes` of an
  `Accelerator`/`PartialState`/`AcceleratorState` (the receiver's class through `self.<attr>` and names, a `None`
  binding aside: the value read is not the `None`), SageMaker's data-parallel size, a conditional of two such
  values or an integer literal (what a property returns when nothing is distributed), and a `@property` of the
  receiver's known class in another scanned file every return of which is one (transformers'
  `TrainingArguments.world_size`).
- `single_process_test(test)`: True when a test holds only with one process (`W <= 1`, `W == 1`, `W < 2`), False
  when only with several (`W > 1`, `W != 1`, `W >= 2`), None otherwise.
- `single_process(node)`: the node runs only where the test says one process runs (the body of a True test, the
  `else` of a False one), within its function or in a function of the file every call of which does (two calls up).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.domain.ranks import returned_values
from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.instances import instance_class_name
from stabfix.model.source.names import Names

WORLD_SIZE_CALLS = frozenset({"torch.distributed.get_world_size", "smdistributed.modelparallel.torch.dp_size",
                              "smdistributed.modelparallel.torch.rdp_size"})
PROCESS_COUNT_CLASSES = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator", "accelerate.PartialState",
                                   "accelerate.state.PartialState", "accelerate.state.AcceleratorState"})
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
MAX_DEPTH = 4


class WorldSizes:
    def __init__(self, names: Names, flows: ValueFlows, project=None) -> None:
        self.names = names
        self.flows = flows
        self.project = project  # the other files of the scan (`ProjectView`), or None

    def single_process(self, node: cst.CSTNode, depth: int = 0) -> bool:
        child, current = node, self.flows.parent(node)
        while current is not None and type(current) is not cst.FunctionDef:
            if type(current) is cst.If:
                polarity = self.single_process_test(current.test)
                if polarity is True and child is current.body or polarity is False and child is current.orelse:
                    return True
            child, current = current, self.flows.parent(current)
        if current is None or depth >= 2:
            return False
        callers = [call for call in self.flows.calls() if self.names.definition_of(call) is current]
        return bool(callers) and all(self.single_process(call, depth + 1) for call in callers)

    def single_process_test(self, test: cst.BaseExpression) -> Optional[bool]:
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        bound = _int(target.comparator)
        if bound is None or not self.world_size(test.left):
            return None
        operator = target.operator
        if type(operator) is cst.LessThanEqual and bound == 1 or type(operator) is cst.Equal and bound == 1 \
                or type(operator) is cst.LessThan and bound == 2:
            return True
        if type(operator) is cst.GreaterThan and bound == 1 or type(operator) is cst.NotEqual and bound == 1 \
                or type(operator) is cst.GreaterThanEqual and bound == 2:
            return False
        return None

    def world_size(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > MAX_DEPTH:
            return False
        if type(expr) is cst.IfExp:
            return self.world_size(expr.body, depth + 1) and self.world_size(expr.orelse, depth + 1)
        if type(expr) is cst.Call:
            qualified = self.names.qualify(expr.func) or ""
            if qualified in WORLD_SIZE_CALLS:
                return True
            if self._builtin_int(expr.func) and len(expr.args) == 1:
                return self.world_size(expr.args[0].value, depth + 1)
            func = expr.func
            return type(func) is cst.Attribute and func.attr.value == "get" and bool(expr.args) \
                and self.names.qualify(func.value) == "os.environ" and _string(expr.args[0].value) == "WORLD_SIZE"
        if type(expr) is cst.Subscript:
            return self.names.qualify(expr.value) == "os.environ" and len(expr.slice) == 1 \
                and type(expr.slice[0].slice) is cst.Index and _string(expr.slice[0].slice.value) == "WORLD_SIZE"
        if type(expr) is cst.Name and expr in self.names.uses:
            values = [b.bound_value for b in self.names.reaching(expr)]
            return bool(values) and all(v is not None and self.world_size(v, depth + 1) for v in values)
        if type(expr) is cst.Attribute:
            owner = self.class_of(expr.value)
            if owner is None:
                return False
            if owner in PROCESS_COUNT_CLASSES:
                return expr.attr.value == "num_processes"
            return self.project is not None and bool(self.project.foreign(
                f"{owner}.{expr.attr.value}", _property_is_world_size, needs=("distributed",), kinds=("method",)))
        return False

    def _builtin_int(self, func: cst.BaseExpression) -> bool:
        """`int` not bound by the file (Python's builtin)."""
        return type(func) is cst.Name and func.value == "int" and not (func in self.names.uses and self.names.bindings_of(func))

    def class_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """The class whose instance `expr` holds (`source/instances.instance_class_name`)."""
        return instance_class_name(self.names, expr, skip_none=True)


def _property_is_world_size(found) -> Optional[bool]:
    """Whether a `@property` of another file's class returns the number of processes on every `return`."""
    method = found.node
    if type(method) is not cst.FunctionDef or not any(
            (d.decorator.value if type(d.decorator) is cst.Name else None) in PROPERTY_DECORATORS for d in method.decorators):
        return None
    returned = returned_values(method, nested=True)
    if not returned:
        return None
    sizes = WorldSizes(found.model.names, found.model.distributed.flows, None)
    return all(_int(value) is not None or sizes.world_size(value) for value in returned)


def _int(node: cst.BaseExpression) -> Optional[int]:
    return int(node.value) if type(node) is cst.Integer else None


def _string(node: cst.BaseExpression) -> Optional[str]:
    return node.evaluated_value if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str) else None
