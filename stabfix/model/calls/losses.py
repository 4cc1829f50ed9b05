"""Which calls are loss computations, and which of their arguments is the target/reference.

This is the one definition of a loss every rule uses: the model part `losses` (`LossIndex`), built
once per file on the binding model and shared by every rule that asks about losses. Recognised:

* torch functional losses through any import alias (`F.mse_loss`, `from torch.nn.functional import
  smooth_l1_loss as sl1`), also when stored and called later (`self.loss_fn = F.smooth_l1_loss`);
* `torch.nn.*Loss` and user `*Loss` instances: local, module-level, stored on `self` in the same class,
  called through `.forward`, or constructed and called inline (`nn.MSELoss()(pred, y)`);
* classes of another scanned file derived from a torch loss (through `FileModel.project`): one that
  keeps the torch class's `forward` is that torch loss (`class SmoothCE(nn.CrossEntropyLoss)` built
  with other defaults), one with a `forward` of its own is a user loss;
* a callable instance by its use, whatever its class is called (`jaccard = SoftJaccard()`): its call
  compares a computed value with another operand and its result is backpropagated, and it is no model
  (`instance_used_as_loss`);
* user losses by what the callee is called (`energy_loss`, `criterion`, `self.loss_fn` received as an
  argument) or reached through a module or object holding losses (`losses.swd(x, ref)`), where no use
  decides;
* functions of the same file that use an argument as the target of a loss they compute
  (`helper_loss`);
* a parameter every call of its function in the file hands the same torch loss
  (`train(loader, net, opt, nn.L1Loss())`; `parameter_values`, set by the `summaries` part).

`computed_in_class(cls)`: a method of the class computes a loss (the class is built to be trained).

They take (prediction, reference) by convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from stabfix.model.calls.loss_uses import LossUses
from stabfix.model.calls.loss_sources import (  # noqa: F401  (re-exported: the one definition of a loss)
    LossCall,
    LossOperands,
    LossSources,
    identifier_words,
    is_loss_callee_name,
    is_loss_class_name,
    is_loss_like_name,
    is_torch_loss_function,
    loss_by_usage,
    operands,
    read_names,
    receiving_parameter,
)
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.names import Names

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ProjectQueries


class LossIndex(LossUses, LossSources, cst.BatchableCSTVisitor):
    """The model part `losses`: every call of the file, and which of them compute a loss with which
    operands. One per file, shared by every rule that asks about losses.

    The traversal only records where each call sits (its enclosing functions, whether it is test
    code); what a callee is gets resolved afterwards through the binding model (`LossSources`,
    `calls/loss_sources.py`), so `self.crit` called in a method above `__init__` still finds
    `self.crit = nn.MSELoss()`.
    """

    def __init__(
        self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Names, project: Optional["ProjectQueries"] = None
    ) -> None:
        cst.BatchableCSTVisitor.__init__(self)
        LossSources.__init__(self, imports, names, project)
        self.enclosing = enclosing
        self.module: cst.Module | None = None
        self.sites: list[CallSite] = []
        self._asserts = 0
        # the functions and classes around the last call visited, and whether one is a test's
        self._around: tuple[tuple[cst.FunctionDef, ...], tuple[cst.ClassDef, ...]] = ((), ())
        self._in_test_definition = False
        # id(call) -> (the call, its operands): by id, as a node's hash is a Python call (asked ~50k times a
        # big file), the call kept so that its id is not reused
        self._operands: dict[int, tuple[cst.Call, LossOperands | None]] = {}
        self._tested: dict[cst.FunctionDef, list[CallSite]] | None = None  # function -> the sites calling it
        # id(function) -> (the function, whether only test code calls it): asked for every call site of it
        self._test_helpers: dict[int, tuple[cst.FunctionDef, bool]] = {}
        # the loss sites with their operands, and how many call sites they were read from: every final
        # once no `operands` is under way (none of them is then a recursion guard's placeholder)
        self._loss_sites: tuple[int, list[tuple[CallSite, LossOperands]]] | None = None
        self._finding_operands = 0  # `operands` calls under way
        LossUses.__init__(self)

    # -- traversal -----------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_Assert(self, node: cst.Assert) -> None:
        self._asserts += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self._asserts -= 1

    def visit_Call(self, node: cst.Call) -> None:
        functions = self.enclosing.enclosing_functions()
        around = (functions, self.enclosing.enclosing_classes())
        if around != self._around:  # the calls of one function share the answer: read once until it changes
            self._around = around
            self._in_test_definition = any(_is_test_name(f.name.value) for f in functions) or any(
                c.name.value.startswith("Test") for c in around[1])
        else:
            functions = self._around[0]  # one tuple kept for the sites of a function, not one per call
        in_test = self._asserts > 0 or self._in_test_definition
        outer: cst.FunctionDef | cst.Module | None = functions[0] if functions else self.module
        if not functions and self.enclosing.innermost_class() is not None:
            outer = None  # a class body is not a scope of its own for the rules
        self.sites.append(CallSite(node, functions, outer, in_test, self.names.position))

    # -- queries -------------------------------------------------------------------------------------
    def operands(self, call: cst.Call) -> LossOperands | None:
        """Prediction and target of a loss call (a same-file helper that uses an argument as a loss
        target counts as a loss of that argument); None when the call is not a loss."""
        known = self._operands.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        self._operands[id(call)] = (call, None)  # a helper calling itself is not a loss of its own
        self._finding_operands += 1
        try:
            found = self._find_operands(call)
        finally:
            self._finding_operands -= 1
        self._operands[id(call)] = (call, found)
        return found

    def loss_sites(self) -> Iterator[tuple[CallSite, LossOperands]]:
        known = self._loss_sites
        if known is not None and known[0] == len(self.sites):
            yield from known[1]
            return
        found: list[tuple[CallSite, LossOperands]] = []
        final = True
        for site in self.sites:
            final = final and self._finding_operands == 0
            loss = self.operands(site.call)
            if loss is not None:
                found.append((site, loss))
                yield site, loss
        if final:
            self._loss_sites = (len(self.sites), found)

    def computed_in_class(self, cls: cst.ClassDef) -> bool:
        """A method of `cls` (or a function nested in one) computes a loss: the class is built to be
        trained, by this file or another (`def loss_fn(self, logits, y): return self.criterion(logits, y)`)."""
        methods = {item for item in cls.body.body if type(item) is cst.FunctionDef}
        return any(site.functions and site.functions[0] in methods for site, _ in self.loss_sites())

    def in_test_code(self, site: "CallSite") -> bool:
        """In an `assert` or a test function, or in a function of the file that only test code calls (a
        helper of the tests: comparing a loss of x with x there is a check too)."""
        if site.in_test or not site.functions:
            return site.in_test
        function = site.functions[0]
        known = self._test_helpers.get(id(function))
        if known is None or known[0] is not function:
            known = self._test_helpers[id(function)] = (function, self._only_called_by_tests(function, 0))
        return known[1]

    def _only_called_by_tests(self, function: cst.FunctionDef, depth: int) -> bool:
        if depth > 4:
            return False
        if self._tested is None:  # the calls of each function of the file, once
            self._tested = {}
            for site in self.sites:
                callee = self.names.definition_of(site.call)
                if callee is not None:
                    self._tested.setdefault(callee, []).append(site)
        callers = self._tested.get(function, [])
        return bool(callers) and all(
            caller.in_test or (caller.functions and caller.functions[0] is not function
                               and self._only_called_by_tests(caller.functions[0], depth + 1))
            for caller in callers)

    def calls_in(self, function: cst.FunctionDef) -> list[cst.Call]:
        return [site.call for site in self.sites if function in site.functions]

@dataclass(eq=False)
class CallSite:
    call: cst.Call
    functions: tuple[cst.FunctionDef, ...]  # the enclosing functions, outermost first
    outer: cst.FunctionDef | cst.Module | None  # outermost function, or the module; None in a class body
    in_test: bool  # inside an `assert` or a test function: comparing a loss of x with x is a check
    order: int = 0  # the binding model's position when the call starts (`Names.position`)


def _is_test_name(name: str) -> bool:
    return name.startswith("test") or name.endswith("_test")
