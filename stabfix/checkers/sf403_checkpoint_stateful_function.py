"""SF403 checkpoint-stateful-function: activation checkpointing around a function that returns or changes state.

A query over the model: which calls are activation checkpoints (`torch.utils.checkpoint.checkpoint`,
`checkpoint_sequential`, DeepSpeed's `deepspeed.checkpointing.checkpoint`, through imports and aliases,
`names.qualify`), what the checkpointed callable runs (`names.callable_of`: a same-file function, method,
lambda, `functools.partial`, a module of the file (its `forward`), a torch RNN module, an element of a
module container), and what that returns or changes (`model.recurrence`). Reported at the checkpoint call:

- the callable returns recurrent state: an RNN module's `h_n`, a tuple element carried across time steps
  in a loop, the state output of a recurrent callee, or a container of such states;
- the call site feeds a state output back in: `out, h = checkpoint(step, x, h)` (an output after the
  first re-binds a name passed as an argument);
- the callable changes state outside the call: assigns or updates `self.<attr>`, appends to or stores
  into a container it did not create (it runs again during backward, so the change happens twice).

Report only (fix: none). Random numbers are not state here: checkpoint restores the RNG for the rerun.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.source.names import Callee
from stabfix.model.source.syntax import code_of, names_in
from stabfix.shape import Shape

CHECKPOINTS = {
    "torch.utils.checkpoint.checkpoint": False,
    "torch.utils.checkpoint.checkpoint_sequential": True,
    "deepspeed.checkpointing.checkpoint": False,
    "deepspeed.runtime.activation_checkpointing.checkpointing.checkpoint": False,
}


class CheckpointStatefulFunction(Checker):
    code = "SF403"
    tokens = ("checkpoint",)
    # only CHECKPOINTS are reported, and a qualified name is built from identifiers the file spells
    # (imports and attribute chains): each of them has `utils` or `deepspeed` among its parts
    also_needs = (("utils", "deepspeed"),)
    needs = ("names", "recurrence")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a call, with arguments, of a checkpoint function however imported or aliased
        return any(call.args or call.keywords for call in shape.calls(*shape.spellings("checkpoint", "checkpoint_sequential")))

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.recurrence = self.model.recurrence
        self.candidates: list[cst.Call] = []
        self.assigned: dict[int, cst.Assign] = {}
        self.first_only: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        if node.args and ("checkpoint" in name or "ckpt" in name or type(func) is cst.Name):
            self.candidates.append(node)  # aliases resolve once the file is read

    def visit_Subscript(self, node: cst.Subscript) -> None:
        first = node.slice[0].slice if len(node.slice) == 1 else None
        if type(first) is cst.Index and type(first.value) is cst.Integer and first.value.value == "0":
            self.first_only.add(id(node.value))  # `checkpoint(self.lstm, x)[0]`

    def visit_Assign(self, node: cst.Assign) -> None:
        if type(node.value) is cst.Call:
            self.assigned[id(node.value)] = node

    def leave_Module(self, original_node: cst.Module) -> None:
        for call in self.candidates:
            qualified = self.names.qualify(call.func)
            if qualified not in CHECKPOINTS:
                continue
            function = _function_argument(call)
            if function is None:
                continue
            callee = self.names.element_of(function, 0) if CHECKPOINTS[qualified] else self.names.callable_of(function)
            what = code_of(function, 40)
            reason = None if self._state_discarded(call) else self.recurrence.state_output(callee)
            if reason is not None:
                self.report(call, self._returns_state(call, what, reason))
                continue
            fed_back = self._fed_back(call)
            if fed_back is not None:
                self.report(call, self._returns_state(call, what, f"`{fed_back}` goes out and back in as state"))
                continue
            change = self._mutation(callee)
            if change is not None:
                self.report(
                    call,
                    f"`{code_of(call, 50)}` reruns `{what}` in backward, and `{what}` {change}, so the change "
                    "happens twice per step; move the state update out of the checkpointed function",
                )

    def _returns_state(self, call: cst.Call, what: str, reason: str) -> str:
        return (
            f"`{code_of(call, 50)}` reruns `{what}` in backward, but it returns recurrent state ({reason}), whose "
            "recomputed gradient path breaks or is lost; checkpoint only the stateless part, or not this function"
        )

    def _state_discarded(self, call: cst.Call) -> bool:
        """`out, _ = checkpoint(self.lstm, x)` / `checkpoint(...)[0]`: only the first output is kept."""
        if id(call) in self.first_only:
            return True
        assign = self.assigned.get(id(call))
        if assign is None or len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Tuple:
            return False
        rest = assign.targets[0].target.elements[1:]
        return bool(rest) and all(type(e.value) is cst.Name and e.value.value == "_" for e in rest)

    def _fed_back(self, call: cst.Call) -> str | None:
        """`out, h = checkpoint(step, x, h)`: an output after the first re-binds an argument's name."""
        assign = self.assigned.get(id(call))
        if assign is None or len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Tuple:
            return None
        arguments = set().union(*(names_in(arg.value) for arg in call.args[1:] if arg.keyword is None))
        for element in assign.targets[0].target.elements[1:]:
            shared = sorted(names_in(element.value) & arguments)
            if shared:
                return shared[0]
        return None

    def _mutation(self, callee: Callee | None) -> str | None:
        if callee is None or callee.kind not in ("function", "lambda") or callee.node is None:
            return None
        return self.recurrence.mutation(callee.node)  # type: ignore[arg-type]


def _function_argument(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value in ("function", "functions"):
            return arg.value
    return None
