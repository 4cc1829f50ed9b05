"""SF402 optimizer-step-undo: after `optimizer.step()`, the step is "undone" in place with `lr * p.grad`."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.model.bindings import FunctionBindings, collect_bindings
from stabfix.model.imports import dotted_name
from stabfix.model.optimizers import OptimizerInfo, Scope
from stabfix.checker import Checker
from stabfix.findings import Fix

_IN_PLACE = {"add_": 1, "sub_": -1, "copy_": 0}
# Calls after which `p.grad` no longer holds the gradient the step used.
_BARRIER_METHODS = {"backward", "manual_backward"}
# Calls that clear gradients: gradient math after them changes nothing (it is still a broken undo).
_CLEARING_METHODS = {"zero_grad"}
_BARRIER_FUNCTIONS = {"torch.autograd.grad", "torch.autograd.backward"}
# Methods that keep the sign of a gradient tensor, and the ones that scale it by their argument.
_SIGN_KEEPING = {
    "data", "detach", "clone", "to", "float", "double", "half", "bfloat16", "type_as", "view", "view_as",
    "reshape", "contiguous", "sign", "clamp", "clip", "cpu", "cuda", "to_dense", "coalesce", "flatten",
    "squeeze", "unsqueeze", "expand_as", "nan_to_num",
}
_SCALING = {"mul", "multiply", "div", "divide", "true_divide"}
_PARAM_WRAPPERS = {"list", "tuple", "enumerate", "filter", "sorted", "reversed", "iter", "zip", "chain", "itertools.chain"}
_NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled"}
_HARMLESS_CALLS = {"float", "int", "abs", "min", "max", "len", "get"}


@dataclass(frozen=True)
class _Site:
    scope: Scope
    order: int
    branches: tuple[tuple[int, str], ...]
    blocks: tuple[cst.CSTNode, ...]  # enclosing IndentedBlock/Module nodes, outermost first


@dataclass
class _Step:
    call: cst.Call
    candidates: tuple[cst.BaseExpression, ...]  # what may be the stepped optimizer (`opt`, or `scaler.step(opt)`'s arg)
    site: _Site
    line: cst.SimpleStatementLine | None  # its own line, when the step starts it (fix anchor)


@dataclass
class _Undo:
    node: cst.CSTNode  # the in-place call / augmented assignment / `.data =` assignment
    param: str
    operation: str  # add_ sub_ copy_ += -= data=
    site: _Site
    line: cst.SimpleStatementLine | None
    loops: tuple[cst.For, ...]  # enclosing for-loops of the same function, outermost first


@dataclass
class _Found:
    """The optimizer step an undo refers to."""

    step: _Step
    optimizer: OptimizerInfo
    expression: cst.BaseExpression  # the stepped optimizer as written at the step
    cleared_by: str | None  # `optimizer.zero_grad()` when gradients were cleared in between


@dataclass
class _LocalCall:
    name: str
    on_self: bool
    site: _Site


@dataclass(frozen=True)
class _Origin:
    """What an iteration over parameters draws from: models (`m.parameters()`) or optimizers (param_groups)."""

    models: frozenset[str] = frozenset()
    optimizers: frozenset[str] = frozenset()
    # a list the code keeps (`self.trainable`): parameters only if the optimizer was built from it
    held_list: str | None = None


@dataclass
class _Loops:
    """The loops that enumerate the undone parameter, outermost first (empty: a single tensor)."""

    chain: tuple[cst.For, ...]
    origin: _Origin


class OptimizerStepUndo(Checker):
    code = "SF402"
    tokens = (".grad",)
    also_needs = (("step",),)  # an undo is only reported after an optimizer step (`.step(`, `optimizer_step`)
    needs = ("optimizers",)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.optimizers = self.model.optimizers
        self.module: cst.Module | None = None
        self.order = 0
        self.fors: list[cst.For | None] = []  # None marks a function boundary
        self.blocks: list[cst.CSTNode] = []
        self.lines: list[cst.SimpleStatementLine | None] = []
        self.branches: list[tuple[int, str]] = []
        self.tries: list[cst.Try | cst.TryStar] = []
        self.steps: list[_Step] = []
        self.undos: list[_Undo] = []
        self.local_calls: list[_LocalCall] = []
        self.barriers: dict[cst.FunctionDef | None, list[int]] = {}
        self.clears: dict[cst.FunctionDef | None, list[tuple[int, str]]] = {}
        self.cleared_by: dict[cst.FunctionDef | None, set[str]] = {}  # what `X.zero_grad()` is called on
        self.assigned: dict[cst.FunctionDef | None, dict[str, list[int]]] = {}
        self.for_order: dict[cst.For, int] = {}
        self.with_bodies: set[int] = set()  # ids of blocks that are `with` bodies (always run)

    # --- traversal bookkeeping ------------------------------------------------------------------
    def _site(self) -> _Site:
        self.order += 1
        return _Site(self.optimizers.scope(), self.order, tuple(self.branches), tuple(self.blocks))

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.blocks.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.fors.append(None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.fors.pop()

    def visit_For(self, node: cst.For) -> None:
        self.for_order[node] = self._site().order
        self._note_assigned(node.target)
        self.fors.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.fors.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_With(self, node: cst.With) -> None:
        self.with_bodies.add(id(node.body))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.lines.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.lines.append(None)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self.lines.pop()

    # Branches that exclude each other: `if` body / `else`, `try` body / handlers / `else`.
    def visit_If_body(self, node: cst.If) -> None:
        self.branches.append((id(node), "if.body"))

    def leave_If_body(self, node: cst.If) -> None:
        self.branches.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self.branches.append((id(node), "if.else"))

    def leave_If_orelse(self, node: cst.If) -> None:
        self.branches.pop()

    def visit_Try(self, node: cst.Try) -> None:
        self.tries.append(node)

    def leave_Try(self, original_node: cst.Try) -> None:
        self.tries.pop()

    def visit_Try_body(self, node: cst.Try) -> None:
        self.branches.append((id(node), "try.body"))

    def leave_Try_body(self, node: cst.Try) -> None:
        self.branches.pop()

    def visit_Try_orelse(self, node: cst.Try) -> None:
        self.branches.append((id(node), "try.else"))

    def leave_Try_orelse(self, node: cst.Try) -> None:
        self.branches.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        owner = id(self.tries[-1]) if self.tries else 0
        self.branches.append((owner, f"try.except.{id(node)}"))

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self.branches.pop()

    def _note_assigned(self, target: cst.CSTNode) -> None:
        names = _target_names(target)
        if names:
            scope = self.optimizers.current_function()
            table = self.assigned.setdefault(scope, {})
            for name in names:
                table.setdefault(name, []).append(self.order)

    # --- collecting sites -----------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "step" or method == "optimizer_step":
                self._record_step(node)
            elif method in _BARRIER_METHODS:
                self._record_barrier()
            elif method in _CLEARING_METHODS:
                site = self._site()
                self.clears.setdefault(site.scope.function, []).append((site.order, _code(node)))
                receiver = dotted_name(func.value)
                if receiver is not None:
                    self.cleared_by.setdefault(site.scope.function, set()).add(receiver)
            elif method in _IN_PLACE:
                if _is_grad_attribute(func.value):
                    self._record_barrier()  # `p.grad.copy_(g)`: the gradient is no longer the step's
                else:
                    param = _param_of_receiver(func.value)
                    if param is not None:
                        self._record_undo(node, param, method)
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                self.local_calls.append(_LocalCall(method, True, self._site()))
        elif isinstance(func, cst.Name):
            self.local_calls.append(_LocalCall(func.value, False, self._site()))
        if self.qualified_name(func) in _BARRIER_FUNCTIONS:  # torch.autograd.grad(...), through aliases
            self._record_barrier()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_assigned(node.target)
        param = _param_of_receiver(node.target)
        if param is None:
            return
        if isinstance(node.operator, cst.AddAssign):
            self._record_undo(node, param, "+=")
        elif isinstance(node.operator, cst.SubtractAssign):
            self._record_undo(node, param, "-=")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._note_assigned(target.target)
            if _is_grad_attribute(target.target):
                self._record_barrier()  # `p.grad = g`: the gradient is no longer the step's
        if len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and target.attr.value == "data" and isinstance(target.value, cst.Name):
                self._record_undo(node, target.value.value, "data=")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._note_assigned(node.target)

    def _record_step(self, call: cst.Call) -> None:
        func = call.func
        assert isinstance(func, cst.Attribute)
        candidates: list[cst.BaseExpression] = []
        if func.attr.value == "step":
            candidates.append(func.value)
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        optimizer_kw = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "optimizer"]
        candidates.extend(optimizer_kw or positional[:1])  # `scaler.step(opt)`, `xm.optimizer_step(opt)`
        line = self.lines[-1] if self.lines else None
        if line is not None and not _starts_line(line, call):
            line = None
        self.steps.append(_Step(call, tuple(candidates), self._site(), line))

    def _record_barrier(self) -> None:
        site = self._site()
        self.barriers.setdefault(site.scope.function, []).append(site.order)

    def _record_undo(self, node: cst.CSTNode, param: str, operation: str) -> None:
        loops: list[cst.For] = []
        for loop in reversed(self.fors):
            if loop is None:
                break
            loops.append(loop)
        loops.reverse()
        line = self.lines[-1] if self.lines else None
        self.undos.append(_Undo(node, param, operation, self._site(), line, tuple(loops)))

    # --- deciding -----------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.undos or not self.steps:
            return
        bindings_cache: dict[cst.CSTNode, FunctionBindings] = {}
        fixed_loops: set[int] = set()
        for undo in self.undos:
            scope_node = undo.site.scope.function or original_node
            if scope_node not in bindings_cache:
                bindings_cache[scope_node] = collect_bindings(scope_node)
            bindings = bindings_cache[scope_node]
            sign = _undo_sign(undo, bindings)
            if sign not in (1, -1):
                continue
            loops = self._parameter_loops(undo, bindings)
            if loops is None:
                continue
            found = self._step_before(undo.site, undo, loops, sign, bindings)
            if found is not None:
                fix = None
                anchor = id(loops.chain[0]) if loops.chain else id(undo.node)
                if anchor not in fixed_loops:
                    fix = self._fix(undo, found.step, found.expression, loops)
                    if fix is not None:
                        fixed_loops.add(anchor)
                self.report(undo.node, _message(undo, sign, found, None), fix)
                continue
            via = self._step_before_call_of(undo, loops, sign, bindings)
            if via is not None:
                found, caller = via
                self.report(undo.node, _message(undo, sign, found, caller), None)

    def _parameter_loops(self, undo: _Undo, bindings: FunctionBindings) -> _Loops | None:
        """The loops that enumerate the undone tensor as a model's/optimizer's parameter, if they do."""
        index = next(
            (i for i in range(len(undo.loops) - 1, -1, -1) if undo.param in _target_names(undo.loops[i].target)),
            None,
        )
        if index is None:
            return _Loops((), _Origin())  # a single tensor: must be one the optimizer was built with
        chain = [undo.loops[index]]
        needed = _names_in(undo.loops[index].iter)
        for loop in reversed(undo.loops[:index]):
            if _target_names(loop.target) & needed:
                chain.insert(0, loop)
                needed |= _names_in(loop.iter)
        source = _element_source(chain[-1].target, chain[-1].iter, undo.param)
        origin = self._parameter_origin(source, tuple(chain), bindings, depth=0)
        return _Loops(tuple(chain), origin) if origin is not None else None

    def _parameter_origin(
        self, expr: cst.BaseExpression, chain: tuple[cst.For, ...], bindings: FunctionBindings, depth: int
    ) -> _Origin | None:
        if depth > 6:
            return None
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                model = dotted_name(func.value)
                return _Origin(models=frozenset({model}) if model else frozenset())
            name = dotted_name(func) or ""
            if name in _PARAM_WRAPPERS or (self.qualified_name(func) or "") == "itertools.chain":
                origins = [self._parameter_origin(arg.value, chain, bindings, depth + 1) for arg in expr.args]
                known = [origin for origin in origins if origin is not None]
                if known:
                    return _Origin(
                        frozenset().union(*(o.models for o in known)), frozenset().union(*(o.optimizers for o in known))
                    )
            return None
        if isinstance(expr, cst.Subscript):
            if _subscript_key(expr) != "params":
                return None
            group = expr.value
            if isinstance(group, cst.Subscript) and isinstance(group.value, cst.Attribute):
                groups = group.value  # `opt.param_groups[0]["params"]`
            elif isinstance(group, cst.Name):
                groups = next((loop.iter for loop in chain if group.value in _target_names(loop.target)), None)
                if isinstance(groups, cst.Name):
                    value = _single_binding(bindings, groups.value)
                    groups = value if value is not None else groups
            else:
                return None
            if isinstance(groups, cst.Attribute) and groups.attr.value == "param_groups":
                optimizer = dotted_name(groups.value)
                return _Origin(optimizers=frozenset({optimizer}) if optimizer else frozenset())
            return None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            comp: cst.CompFor | None = expr.for_in
            while comp is not None:
                origin = self._parameter_origin(comp.iter, chain, bindings, depth + 1)
                if origin is not None:
                    return origin
                comp = comp.inner_for_in
            return None
        if isinstance(expr, cst.Name):
            values = [binding.value for binding in bindings.by_name.get(expr.value, [])]
            for value in values:
                origin = self._parameter_origin(value, chain, bindings, depth + 1)
                if origin is not None:
                    return origin
            # `params = get_trainable_params(model)`: the name says what it holds
            return _Origin() if "param" in expr.value.lower() else None
        if isinstance(expr, cst.Attribute) and "param" in expr.attr.value.lower():
            return _Origin()
        if isinstance(expr, cst.Attribute):
            return _Origin(held_list=dotted_name(expr))
        return None

    def _step_before(
        self, site: _Site, undo: _Undo, loops: _Loops, sign: int, bindings: FunctionBindings
    ) -> _Found | None:
        """The latest optimizer step that runs before `site` in the same function with the same gradients."""
        function = site.scope.function
        barriers = self.barriers.get(function, [])
        for step in sorted(self.steps, key=lambda s: -s.site.order):
            if step.site.scope.function is not function or step.site.order >= site.order:
                continue
            if _exclusive(step.site.branches, site.branches) or _returns_before(step.site, site):
                continue
            if any(step.site.order < barrier < site.order for barrier in barriers):
                return None  # gradients were recomputed in between
            for candidate in step.candidates:
                optimizer = self.optimizers.resolve(candidate, step.site.scope)
                if optimizer is None:
                    continue
                if not self._trains(optimizer, loops, undo, candidate):
                    return None
                if sign == 1 and optimizer.known_plain_sgd:
                    return None  # `p -= lr * grad` was exactly the step: adding it back undoes it
                if sign == -1 and not self._same_optimizer(optimizer, candidate, loops, undo, bindings):
                    return None  # a descent step on tensors that may not be this optimizer's
                cleared = next(
                    (code for order, code in self.clears.get(function, []) if step.site.order < order < site.order),
                    None,
                )
                return _Found(step, optimizer, candidate, cleared)
        return None

    def _step_before_call_of(
        self, undo: _Undo, loops: _Loops, sign: int, bindings: FunctionBindings
    ) -> tuple[_Found, str] | None:
        """A helper that does the undo, called right after an optimizer step in another function."""
        function = undo.site.scope.function
        if function is None or not loops.chain or any(step.site.scope.function is function for step in self.steps):
            return None
        if any(order < undo.site.order for order in self.barriers.get(function, [])):
            return None
        is_method = undo.site.scope.cls is not None and len(undo.site.scope.functions) == 1
        for call in self.local_calls:
            if call.name != function.name.value or call.site.scope.function is function:
                continue
            if call.on_self != is_method or (is_method and call.site.scope.cls is not undo.site.scope.cls):
                continue
            found = self._step_before(call.site, undo, loops, sign, bindings)
            if found is not None:
                caller = call.site.scope.function.name.value if call.site.scope.function else "module level"
                return found, caller
        return None

    def _trains(self, optimizer: OptimizerInfo, loops: _Loops, undo: _Undo, spelled: cst.BaseExpression) -> bool:
        """False when the file shows that the undone tensors are not this optimizer's parameters."""
        if not loops.chain:
            # A single tensor: it must be among the tensors the optimizer was built with.
            return optimizer.constructor is not None and undo.param in _names_in(optimizer.constructor)
        origin = loops.origin
        if origin.held_list is not None:
            return optimizer.constructor is not None and _builds_from(optimizer.constructor, origin.held_list)
        if origin.optimizers:
            stepped = dotted_name(spelled)
            return stepped is None or stepped in origin.optimizers or optimizer.expression in origin.optimizers
        if origin.models and optimizer.constructor is None and self._managed_apart(origin.models, spelled, undo):
            return False
        if origin.models and optimizer.constructor is not None:
            trained = _models_in(optimizer.constructor)
            if trained and "" not in origin.models:
                return any(_overlaps(a, b) for a in trained for b in origin.models)
        return True

    def _managed_apart(self, models: frozenset[str], spelled: cst.BaseExpression, undo: _Undo) -> bool:
        """The function clears the optimizer's gradients and, separately, the undone model's
        (`optimizer.zero_grad(); adversary.zero_grad()`): that model is trained by hand, not by this
        optimizer (gradient descent-ascent, a manually updated critic)."""
        cleared = self.cleared_by.get(undo.site.scope.function, set())
        stepped = dotted_name(spelled)
        return stepped in cleared and "" not in models and all(model in cleared for model in models)

    def _same_optimizer(
        self, optimizer: OptimizerInfo, spelled: cst.BaseExpression, loops: _Loops, undo: _Undo, bindings: FunctionBindings
    ) -> bool:
        """Positive evidence that the tensors are the stepped optimizer's own (needed for a -grad update)."""
        if not loops.chain:
            return True  # `_trains` found the tensor among the optimizer's constructor arguments
        stepped = dotted_name(spelled)
        if stepped is not None and (stepped in loops.origin.optimizers or _reads_param_groups(undo.node, stepped, loops.chain, bindings, 0)):
            return True
        if optimizer.constructor is not None and loops.origin.models:
            trained = _models_in(optimizer.constructor)
            return bool(trained) and "" not in loops.origin.models and any(
                _overlaps(a, b) for a in trained for b in loops.origin.models
            )
        return False

    # --- the fix ----------------------------------------------------------------------------------
    def _fix(self, undo: _Undo, step: _Step, optimizer: cst.BaseExpression, loops: _Loops) -> Fix | None:
        module = self.module
        if module is None or step.line is None or not step.site.blocks:
            return None
        if not self._snapshot_reaches(step, undo):
            return None  # the restore would run where the snapshot may never have been taken
        function = undo.site.scope.function
        if loops.chain:
            outer = loops.chain[0]
            if any(loop.asynchronous is not None for loop in loops.chain):
                return None
            if self.for_order[outer] < step.site.order:
                return None
            replaced: cst.CSTNode = outer
            names_needed = set().union(*(_names_in(loop.iter) for loop in loops.chain)) - set().union(
                *(_target_names(loop.target) for loop in loops.chain)
            )
            start = self.for_order[outer]
        else:
            if undo.line is None or len(undo.line.body) != 1 or undo.line not in _block_body(undo.site.blocks[-1]):
                return None
            replaced = undo.line
            names_needed = {undo.param}
            start = undo.site.order
        # Names the snapshot reads must hold the same objects before the step as at the undo.
        names_needed |= _names_in(optimizer)
        table = self.assigned.get(function, {})
        if any(step.site.order < order < start for name in names_needed for order in table.get(name, [])):
            return None
        undo_nodes = {id(u.node) for u in self.undos if u.param == undo.param}
        scope_node = function or module
        if loops.chain and not _only_undo(loops.chain[0], undo.param, undo_nodes, scope_node):
            return None
        deepcopy = self._deepcopy_spelling(scope_node)
        if deepcopy is None:
            return None
        taken = _all_names(scope_node)
        params_var = _fresh("params_to_restore", taken) if loops.chain else ""
        saved_var = _fresh("saved_params" if loops.chain else f"saved_{undo.param}", taken)
        state_var = _fresh("saved_optimizer_state", taken)
        item_var = _fresh("saved", taken) if loops.chain else ""
        p = undo.param
        opt = _code(optimizer)
        config = module.config_for_parsing
        if loops.chain:
            clauses = " ".join(f"for {_code(loop.target)} in {_code(loop.iter)}" for loop in loops.chain)
            snapshot = [
                f"{params_var} = [{p} {clauses} if {p}.grad is not None]\n",
                f'{saved_var} = [{p}.detach().to("cpu", copy=True) for {p} in {params_var}]\n',
            ]
            restore = [
                f"for {p}, {item_var} in zip({params_var}, {saved_var}):\n"
                f"    {p}.data.copy_({item_var}.to({p}.device))\n",
            ]
        else:
            snapshot = [f'{saved_var} = {p}.detach().to("cpu", copy=True)\n']
            restore = [f"{p}.data.copy_({saved_var}.to({p}.device))\n"]
        snapshot.append(f"{state_var} = {deepcopy}({opt}.state_dict())\n")
        restore.append(f"{opt}.load_state_dict({state_var})\n")
        before = [cst.parse_statement(code, config=config) for code in snapshot]
        after = [cst.parse_statement(code, config=config) for code in restore]
        before[0] = before[0].with_changes(leading_lines=step.line.leading_lines)
        after[0] = after[0].with_changes(leading_lines=replaced.leading_lines)  # type: ignore[attr-defined]
        return Fix(
            "unsafe",
            f"snapshot the parameters (on CPU) and `{opt}.state_dict()` before the step and restore both instead "
            "of undoing the step with gradient math",
            {
                step.line: cst.FlattenSentinel([*before, step.line.with_changes(leading_lines=())]),
                replaced: cst.FlattenSentinel(after),
            },
            imports=("copy",) if deepcopy == "copy.deepcopy" else (),
        )

    def _snapshot_reaches(self, step: _Step, undo: _Undo) -> bool:
        """Whether code put right before the step always runs before the undo: the step's block encloses
        the undo, or only `with` bodies (which always run) stand between them."""
        undo_blocks = {id(block) for block in undo.site.blocks}
        for block in reversed(step.site.blocks):
            if id(block) in undo_blocks:
                return True
            if id(block) not in self.with_bodies:
                return False
        return False

    def _deepcopy_spelling(self, scope_node: cst.CSTNode) -> str | None:
        """`copy.deepcopy` (importing copy when needed), `deepcopy` if imported so, None if `copy` is taken."""
        aliases = self.context.imports.aliases
        for local, full in aliases.items():
            if full == "copy.deepcopy":
                return local
        if aliases.get("copy", "copy") != "copy":
            return None
        if self.module is not None and "copy" not in aliases and "copy" in _all_names(self.module):
            return None  # a variable or function named `copy` would shadow the module
        return "copy.deepcopy"


# --- helpers -----------------------------------------------------------------------------------------
def _builds_from(constructor: cst.Call, held: str) -> bool:
    """`AdamW(self.trainable, lr=...)`, `SGD(params=self.trainable)`: the optimizer owns that list's tensors."""
    return any(dotted_name(arg.value) == held for arg in constructor.args)


def _param_of_receiver(node: cst.BaseExpression) -> str | None:
    """`p` for `p` or `p.data`."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and node.attr.value == "data" and isinstance(node.value, cst.Name):
        return node.value.value
    return None


def _element_source(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> cst.BaseExpression:
    """The iterable that yields `name`: `a` for `for p, q in zip(a, b)` and `p`, `x` for `for i, p in enumerate(x)`."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
        return iterable
    function = dotted_name(iterable.func)
    elements = [element.value for element in target.elements]
    index = next((i for i, element in enumerate(elements) if name in _target_names(element)), None)
    positional = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
    if index is None or any(arg.star for arg in iterable.args):
        return iterable
    if function == "zip" and index < len(positional):
        return _element_source(elements[index], positional[index], name)
    if function == "enumerate" and index == 1 and positional:
        return _element_source(elements[1], positional[0], name)
    return iterable


def _is_grad_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "grad"


def _reads_param_groups(
    node: cst.CSTNode, stepped: str, chain: tuple[cst.For, ...], bindings: FunctionBindings, depth: int
) -> bool:
    """Whether an expression takes its settings from `stepped.param_groups` (`lr = opt.param_groups[0]["lr"]`)."""
    if depth > 4:
        return False
    if isinstance(node, cst.Attribute) and node.attr.value == "param_groups" and dotted_name(node.value) == stepped:
        return True
    if isinstance(node, cst.Name):
        for loop in chain:
            if node.value in _target_names(loop.target):
                return _reads_param_groups(loop.iter, stepped, (), bindings, depth + 1)
        value = _single_binding(bindings, node.value)
        return value is not None and _reads_param_groups(value, stepped, chain, bindings, depth + 1)
    return any(_reads_param_groups(child, stepped, chain, bindings, depth) for child in node.children)


def _starts_line(line: cst.SimpleStatementLine, call: cst.Call) -> bool:
    first = line.body[0]
    if isinstance(first, cst.Expr):
        return first.value is call
    if isinstance(first, (cst.Assign, cst.AnnAssign)):
        return first.value is call
    return False


def _target_names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in _target_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _names_in(node: cst.CSTNode) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _names_in(node.value)
    return {name for child in node.children for name in _names_in(child)}


def _all_names(node: cst.CSTNode) -> set[str]:
    collector = _NameCounter()
    node.visit(collector)
    return set(collector.counts)


class _NameCounter(cst.CSTVisitor):
    """How often each variable name occurs (attribute names, keyword names and imports do not count)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] = self.counts.get(node.value, 0) + 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False


def _fresh(base: str, taken: set[str]) -> str:
    name, index = base, 1
    while name in taken:
        name, index = f"{base}_{index}", index + 1
    taken.add(name)
    return name


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _block_body(block: cst.CSTNode) -> tuple:
    return tuple(getattr(block, "body", ()))


def _single_binding(bindings: FunctionBindings, name: str) -> cst.BaseExpression | None:
    found = bindings.by_name.get(name, [])
    return found[0].value if len(found) == 1 else None


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            value = key.evaluated_value
            return value if isinstance(value, str) else None
    return None


def _models_in(constructor: cst.Call) -> set[str]:
    """Models whose `.parameters()` an optimizer constructor receives (`""` when it gets something else)."""
    params = next((arg.value for arg in constructor.args if arg.keyword and arg.keyword.value == "params"), None)
    if params is None:
        positional = [arg.value for arg in constructor.args if arg.keyword is None]
        params = positional[0] if positional else None
    if params is None:
        return set()
    found: set[str] = set()

    def walk(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "parameters",
            "named_parameters",
        ):
            found.add(dotted_name(node.func.value) or "")
            return
        for child in node.children:
            walk(child)

    walk(params)
    if not found or (isinstance(params, cst.Name)):
        return set()
    return found


def _overlaps(a: str, b: str) -> bool:
    """Whether two model spellings may share parameters (`self.model` is what `__init__` called `model`)."""
    a, b = a.removeprefix("self."), b.removeprefix("self.")
    if "self" in (a, b):
        return True
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _exclusive(first: tuple[tuple[int, str], ...], second: tuple[tuple[int, str], ...]) -> bool:
    """Whether two positions sit in branches of one statement that never both run."""
    labels = dict(first)
    for owner, label in second:
        other = labels.get(owner)
        if other is None or other == label:
            continue
        pair = {other, label}
        if pair == {"if.body", "if.else"}:
            return True
        if any(item.startswith("try.except.") for item in pair) and "try.finally" not in pair:
            return True
    return False


def _returns_before(step: _Site, later: _Site) -> bool:
    """The step sits in a block that ends in return/raise/continue/break and does not contain `later`."""
    for block in step.blocks:
        if any(block is other for other in later.blocks):
            continue
        body = _block_body(block)
        if body and isinstance(body[-1], cst.SimpleStatementLine):
            last = body[-1].body[-1]
            if isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
                return True
    return False


# --- is it an undo? the sign of the gradient term -------------------------------------------------------
def _undo_sign(undo: _Undo, bindings: FunctionBindings) -> int | None:
    """+1 when the statement moves `p` along +grad (undoing a descent step), -1 along -grad, else None."""
    node, p = undo.node, undo.param
    if isinstance(node, cst.Call):
        args = [arg for arg in node.args if not arg.star]
        positional = [arg.value for arg in args if arg.keyword is None]
        alpha = next((arg.value for arg in args if arg.keyword and arg.keyword.value == "alpha"), None)
        if undo.operation == "copy_":
            if not positional or not _mentions_param(positional[0], p):
                return None
            return _nonzero(_grad_sign(positional[0], p, bindings, 0))
        if len(positional) == 2 and _grad_sign(positional[0], p, bindings, 0) == 0:
            term, scale = positional[1], positional[0]  # legacy `add_(lr, p.grad)`
        elif positional:
            term, scale = positional[0], alpha
        else:
            return None
        sign = _grad_sign(term, p, bindings, 0)
        if not sign:
            return None
        if scale is not None:
            factor = _constant_sign(scale, bindings, 0)
            if factor is None:
                return None
            sign *= factor
        return sign * _IN_PLACE[undo.operation]
    if isinstance(node, cst.AugAssign):
        sign = _grad_sign(node.value, p, bindings, 0)
        if not sign:
            return None
        return sign if undo.operation == "+=" else -sign
    if isinstance(node, cst.Assign):
        if not _mentions_param(node.value, p):
            return None
        return _nonzero(_grad_sign(node.value, p, bindings, 0))
    return None


def _nonzero(sign: int | None) -> int | None:
    return sign if sign else None


def _is_grad_of(node: cst.BaseExpression, p: str) -> bool:
    if isinstance(node, cst.Attribute):
        if node.attr.value == "grad" and isinstance(node.value, cst.Name) and node.value.value == p:
            return True
        if node.attr.value == "data":
            return _is_grad_of(node.value, p)
    return False


def _mentions_param(node: cst.CSTNode, p: str) -> bool:
    """Whether an expression reads `p` itself (not only `p.grad`): `p.data + lr * p.grad`."""
    if isinstance(node, cst.BaseExpression) and _is_grad_of(node, p):
        return False
    if isinstance(node, cst.Name):
        return node.value == p
    return any(_mentions_param(child, p) for child in node.children)


def _grad_sign(node: cst.BaseExpression, p: str, bindings: FunctionBindings, depth: int) -> int | None:
    """Sign with which `p.grad` enters an expression: 1, -1, 0 (absent) or None (present, sign unknown)."""
    if depth > 8:
        return None
    if _is_grad_of(node, p):
        return 1
    if isinstance(node, cst.Name):
        value = _single_binding(bindings, node.value)
        if value is None or value is node:
            return 0
        return _grad_sign(value, p, bindings, depth + 1)
    if isinstance(node, cst.UnaryOperation):
        inner = _grad_sign(node.expression, p, bindings, depth + 1)
        if isinstance(node.operator, cst.Minus) and inner:
            return -inner
        return inner if isinstance(node.operator, cst.Plus) or not inner else None
    if isinstance(node, cst.BinaryOperation):
        left = _grad_sign(node.left, p, bindings, depth + 1)
        right = _grad_sign(node.right, p, bindings, depth + 1)
        if left is None or right is None or (left and right):
            return None
        if not left and not right:
            return 0
        op = node.operator
        if isinstance(op, (cst.Multiply, cst.Divide)):
            if right and isinstance(op, cst.Divide):
                return None
            other = node.right if left else node.left
            factor = _constant_sign(other, bindings, depth + 1)
            return (left or right) * factor if factor else None
        if isinstance(op, cst.Add):
            return left or right
        if isinstance(op, cst.Subtract):
            return left if left else -right  # type: ignore[operator]
        return None
    if isinstance(node, cst.Call):
        return _call_grad_sign(node, p, bindings, depth)
    if isinstance(node, cst.Subscript):
        return _grad_sign(node.value, p, bindings, depth + 1)
    return None if _contains_grad(node, p) else 0


def _call_grad_sign(node: cst.Call, p: str, bindings: FunctionBindings, depth: int) -> int | None:
    func = node.func
    args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if isinstance(func, cst.Attribute):
        base = _grad_sign(func.value, p, bindings, depth + 1)
        method = func.attr.value
        if base:
            if method in _SIGN_KEEPING:
                return base
            if method in ("neg", "negative"):
                return -base
            if method in _SCALING and args:
                factor = _constant_sign(args[0], bindings, depth + 1)
                return base * factor if factor else None
            if method in ("add", "sub") and not any(_contains_grad(arg, p) for arg in args):
                return base
            return None
        if base is None:
            return None
        if method in ("add", "sub") and args:  # `p.data.add(p.grad, alpha=lr)` used as a value
            sign = _grad_sign(args[0], p, bindings, depth + 1)
            if not sign:
                return sign
            alpha = next((arg.value for arg in node.args if arg.keyword and arg.keyword.value == "alpha"), None)
            factor = _constant_sign(alpha, bindings, depth + 1) if alpha is not None else 1
            return sign * factor * (1 if method == "add" else -1) if factor else None
    return None if _contains_grad(node, p) else 0


def _contains_grad(node: cst.CSTNode, p: str) -> bool:
    if isinstance(node, cst.BaseExpression) and _is_grad_of(node, p):
        return True
    return any(_contains_grad(child, p) for child in node.children)


def _constant_sign(node: cst.BaseExpression, bindings: FunctionBindings, depth: int) -> int | None:
    """Sign of a step-size-like factor: literals by value, names/attributes assumed positive (`lr`)."""
    if depth > 8:
        return None
    if isinstance(node, (cst.Integer, cst.Float)):
        value = float(node.value.replace("_", ""))
        return 1 if value > 0 else None
    if isinstance(node, cst.UnaryOperation):
        inner = _constant_sign(node.expression, bindings, depth + 1)
        if inner is None:
            return None
        return -inner if isinstance(node.operator, cst.Minus) else inner
    if isinstance(node, cst.BinaryOperation):
        left = _constant_sign(node.left, bindings, depth + 1)
        right = _constant_sign(node.right, bindings, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.operator, (cst.Multiply, cst.Divide, cst.FloorDivide)):
            return left * right
        if isinstance(node.operator, cst.Add) and left == right:
            return left
        if isinstance(node.operator, cst.Power) and left == 1:
            return 1
        return None
    if isinstance(node, cst.Name):
        value = _single_binding(bindings, node.value)
        if value is not None and isinstance(value, (cst.UnaryOperation, cst.Integer, cst.Float, cst.BinaryOperation)):
            return _constant_sign(value, bindings, depth + 1)
        return 1
    if isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        return 1
    return None


# --- is the loop only the undo? (then it can be replaced by the restore) --------------------------------
def _only_undo(loop: cst.For, p: str, undo_nodes: set[int], scope_node: cst.CSTNode) -> bool:
    inside = _NameCounter()
    loop.visit(inside)
    everywhere = _NameCounter()
    scope_node.visit(everywhere)
    local_names = {name for name, count in inside.counts.items() if everywhere.counts.get(name) == count}
    return _removable(loop, p, undo_nodes, local_names)


def _removable(node: cst.CSTNode, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if isinstance(node, cst.For):
        return node.orelse is None and _removable_body(node.body, p, undo_nodes, local_names)
    if isinstance(node, cst.If):
        if not _is_grad_guard(node.test, p):
            return False
        return _removable_body(node.body, p, undo_nodes, local_names) and (
            node.orelse is None or _removable_body(node.orelse.body, p, undo_nodes, local_names)
        )
    if isinstance(node, cst.With):
        return all(_is_grad_context(item.item) for item in node.items) and _removable_body(
            node.body, p, undo_nodes, local_names
        )
    if isinstance(node, cst.SimpleStatementLine):
        return all(_removable_small(small, p, undo_nodes, local_names) for small in node.body)
    return False


def _removable_body(body: cst.CSTNode, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if isinstance(body, cst.SimpleStatementSuite):
        return all(_removable_small(small, p, undo_nodes, local_names) for small in body.body)
    if isinstance(body, cst.Else):
        return _removable_body(body.body, p, undo_nodes, local_names)
    return all(_removable(statement, p, undo_nodes, local_names) for statement in _block_body(body))


def _removable_small(small: cst.BaseSmallStatement, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if isinstance(small, (cst.Pass, cst.Continue)):
        return True
    if id(small) in undo_nodes:
        return True
    if isinstance(small, cst.Expr):
        return id(small.value) in undo_nodes
    if isinstance(small, cst.Assign):
        # `lr = group["lr"]`, `d_p = p.grad`: local to the loop and free of side effects
        names = set().union(*(_target_names(target.target) for target in small.targets))
        if not names or any(not isinstance(t.target, cst.Name) for t in small.targets):
            return False
        return names <= local_names and _side_effect_free(small.value)
    return False


def _side_effect_free(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call):
        name = dotted_name(node.func) or ""
        if name.rsplit(".", 1)[-1] not in _HARMLESS_CALLS | _SIGN_KEEPING:
            return False
    return all(_side_effect_free(child) for child in node.children)


def _is_grad_guard(test: cst.BaseExpression, p: str) -> bool:
    """`p.grad is None`, `p.grad is not None`, `not p.requires_grad`, and their and/or/not combinations."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _is_grad_guard(test.expression, p)
    if isinstance(test, cst.BooleanOperation):
        return _is_grad_guard(test.left, p) and _is_grad_guard(test.right, p)
    if isinstance(test, cst.Comparison):
        return (
            _is_grad_of(test.left, p)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None"
        )
    if isinstance(test, cst.Attribute):
        return test.attr.value == "requires_grad" and isinstance(test.value, cst.Name) and test.value.value == p
    return _is_grad_of(test, p)


def _is_grad_context(item: cst.BaseExpression) -> bool:
    if isinstance(item, cst.Call):
        item = item.func
    name = dotted_name(item) or ""
    return name.rsplit(".", 1)[-1] in {n.rsplit(".", 1)[-1] for n in _NO_GRAD_CONTEXTS}


# --- message ------------------------------------------------------------------------------------------
_ADAM_WHY = "its update is lr * m / (sqrt(v) + eps) from running moments"


def _why(optimizer: OptimizerInfo) -> tuple[str, str]:
    """Why this optimizer's step is not lr * grad, and which state stays advanced."""
    klass = (optimizer.class_name or "").lower()
    if "adam" in klass:
        return _ADAM_WHY, "moments and step count stay"
    if "sgd" in klass and optimizer.constructor is not None:
        keywords = {arg.keyword.value for arg in optimizer.constructor.args if arg.keyword is not None}
        reasons = []
        if "momentum" in keywords or len(optimizer.constructor.args) > 2:
            reasons.append("follows its momentum buffer")
        if "weight_decay" in keywords:
            reasons.append("includes weight decay")
        if reasons:
            return "its update " + " and ".join(reasons), "momentum buffer stays"
    return "its update comes from its own rule and per-parameter state", "state stays"


def _message(undo: _Undo, sign: int, found: _Found, caller: str | None) -> str:
    statement = _code(undo.node).strip()
    if len(statement) > 60:
        statement = statement[:57] + "..."
    optimizer = found.optimizer
    name = _code(found.expression) if caller is None else optimizer.expression
    klass = optimizer.class_name
    where = f"`{name}.step()`" + (f" (in `{caller}`)" if caller else "")
    if sign == -1:
        problem = (
            "it moves the parameters along -grad once more (a second step, not an undo), "
            "and the optimizer's state stays advanced"
        )
    elif klass is None:
        problem = (
            f"that is exact only for plain SGD (the class of `{name}` is not visible here): Adam/AdamW, momentum "
            "or weight decay take a different step, and the optimizer's state stays advanced"
        )
    else:
        why, state = _why(optimizer)
        problem = f"`{name}` is {klass}: {why}, not lr * grad, and its {state} advanced"
    if found.cleared_by:
        problem += f"; `{found.cleared_by}` cleared the gradients first, so as written it changes nothing"
    return (
        f"`{statement}` tries to undo {where} with gradient math, but {problem}; snapshot the parameters "
        f"(on CPU) and `copy.deepcopy({name}.state_dict())` right before the step and restore both here"
    )
