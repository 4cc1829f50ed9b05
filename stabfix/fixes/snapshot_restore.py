"""Snapshot before an optimizer step, restore after: the codemod that takes a step back exactly.

Undoing an optimizer step by hand (`p.data.add_(lr * p.grad)`, or any arithmetic) cannot restore the
parameters or the optimizer's state. This builder inserts, right before the step's line,

    params_to_restore = [p for p in <the loops' iterables> if p.grad is not None]
    saved_params = [p.detach().to("cpu", copy=True) for p in params_to_restore]
    saved_optimizer_state = copy.deepcopy(<optimizer>.state_dict())

(one `saved_<p>` for a single tensor) and puts the restore where the hand-written undo was:

    for p, saved in zip(params_to_restore, saved_params):
        p.data.copy_(saved.to(p.device))
    <optimizer>.load_state_dict(saved_optimizer_state)

Only parameters with a gradient at the step are saved: no torch optimizer moves the others.
`replaceable_loop` tells whether a loop does nothing but the undo (then the restore replaces it).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.findings import Fix
from stabfix.fixes.syntax import block_body, code_for, fresh_name
from stabfix.model.flow.parameters import target_names
from stabfix.model.flow.updates import SIGN_KEEPING, is_grad_of
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names

_GRAD_MODE_CONTEXTS = {"no_grad", "inference_mode", "enable_grad", "set_grad_enabled"}
_HARMLESS_CALLS = {"float", "int", "abs", "min", "max", "len", "get"} | SIGN_KEEPING


def snapshot_restore_fix(
    module: cst.Module,
    step_line: cst.SimpleStatementLine,
    replaced: cst.CSTNode,
    param: str,
    loops: tuple[cst.For, ...],
    optimizer: cst.BaseExpression,
    deepcopy: str,
    taken: set[str],
) -> Fix:
    """Snapshot before `step_line`, restore in place of `replaced` (the undo loop or line).

    `param` is the tensor variable, enumerated by `loops` (outermost first; empty for one tensor, then
    it may be an attribute chain: `model.head.weight`);
    `deepcopy` how the file spells `copy.deepcopy` (see `deepcopy_spelling`); `taken` the names the new
    variables must avoid (updated with them).
    """
    p, opt = param, code_for(optimizer)
    state_var = fresh_name("saved_optimizer_state", taken)
    if loops:
        params_var = fresh_name("params_to_restore", taken)
        saved_var = fresh_name("saved_params", taken)
        item_var = fresh_name("saved", taken)
        clauses = " ".join(f"for {code_for(loop.target)} in {code_for(loop.iter)}" for loop in loops)
        snapshot = [
            f"{params_var} = [{p} {clauses} if {p}.grad is not None]\n",
            f'{saved_var} = [{p}.detach().to("cpu", copy=True) for {p} in {params_var}]\n',
        ]
        restore = [f"for {p}, {item_var} in zip({params_var}, {saved_var}):\n    {p}.data.copy_({item_var}.to({p}.device))\n"]
    else:
        saved_var = fresh_name("saved_" + p.replace(".", "_"), taken)
        snapshot = [f'{saved_var} = {p}.detach().to("cpu", copy=True)\n']
        restore = [f"{p}.data.copy_({saved_var}.to({p}.device))\n"]
    snapshot.append(f"{state_var} = {deepcopy}({opt}.state_dict())\n")
    restore.append(f"{opt}.load_state_dict({state_var})\n")
    config = module.config_for_parsing
    before = [cst.parse_statement(code, config=config) for code in snapshot]
    after = [cst.parse_statement(code, config=config) for code in restore]
    before[0] = before[0].with_changes(leading_lines=step_line.leading_lines)
    after[0] = after[0].with_changes(leading_lines=replaced.leading_lines)  # type: ignore[attr-defined]
    return Fix(
        "unsafe",
        f"snapshot the parameters (on CPU) and `{opt}.state_dict()` before the step and restore both instead "
        "of undoing the step with gradient math",
        {
            step_line: cst.FlattenSentinel([*before, step_line.with_changes(leading_lines=())]),
            replaced: cst.FlattenSentinel(after),
        },
        imports=("copy",) if deepcopy == "copy.deepcopy" else (),
    )


def deepcopy_spelling(imports: ImportTracker, names: Names) -> Optional[str]:
    """`copy.deepcopy` (the fix imports `copy`), the local name of an imported `deepcopy`, or None
    when a variable or another import already holds the name `copy`."""
    for local, full in imports.aliases.items():
        if full == "copy.deepcopy":
            return local
    if imports.aliases.get("copy", "copy") != "copy":
        return None
    if "copy" not in imports.aliases and any(node.value == "copy" for node in names.uses):
        return None
    return "copy.deepcopy"


def replaceable_loop(loop: cst.For, param: str, undo_nodes: set[int], loop_locals: set[str]) -> bool:
    """Whether the loop does nothing but the undo statements (`undo_nodes`, by id): guards on
    `param.grad`/`requires_grad`, grad-mode `with` blocks, `continue`, and side-effect-free
    assignments to `loop_locals` (variables that exist only in the loop) may stand around them."""
    return _removable(loop, param, undo_nodes, loop_locals)


def _removable(node: cst.CSTNode, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if type(node) is cst.For:
        return node.orelse is None and _removable_body(node.body, p, undo_nodes, local_names)
    if type(node) is cst.If:
        if not _is_grad_guard(node.test, p):
            return False
        return _removable_body(node.body, p, undo_nodes, local_names) and (
            node.orelse is None or _removable_body(node.orelse.body, p, undo_nodes, local_names)
        )
    if type(node) is cst.With:
        return all(_is_grad_mode(item.item) for item in node.items) and _removable_body(node.body, p, undo_nodes, local_names)
    if type(node) is cst.SimpleStatementLine:
        return all(_removable_small(small, p, undo_nodes, local_names) for small in node.body)
    return False


def _removable_body(body: cst.CSTNode, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if type(body) is cst.SimpleStatementSuite:
        return all(_removable_small(small, p, undo_nodes, local_names) for small in body.body)
    if type(body) is cst.Else:
        return _removable_body(body.body, p, undo_nodes, local_names)
    return all(_removable(statement, p, undo_nodes, local_names) for statement in block_body(body))


def _removable_small(small: cst.BaseSmallStatement, p: str, undo_nodes: set[int], local_names: set[str]) -> bool:
    if type(small) in (cst.Pass, cst.Continue) or id(small) in undo_nodes:
        return True
    if type(small) is cst.Expr:
        return id(small.value) in undo_nodes
    if type(small) is cst.Assign:
        # `lr = group["lr"]`, `d_p = p.grad`: local to the loop and free of side effects
        if any(type(t.target) is not cst.Name for t in small.targets):
            return False
        names = set().union(*(target_names(target.target) for target in small.targets))
        return bool(names) and names <= local_names and _side_effect_free(small.value)
    return False


def _side_effect_free(node: cst.CSTNode) -> bool:
    if type(node) is cst.Call:
        name = dotted_name(node.func) or ""
        if name.rsplit(".", 1)[-1] not in _HARMLESS_CALLS:
            return False
    return all(_side_effect_free(child) for child in node.children)


def _is_grad_guard(test: cst.BaseExpression, p: str) -> bool:
    """`p.grad is None`, `p.grad is not None`, `not p.requires_grad`, and their and/or/not combinations."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _is_grad_guard(test.expression, p)
    if type(test) is cst.BooleanOperation:
        return _is_grad_guard(test.left, p) and _is_grad_guard(test.right, p)
    if type(test) is cst.Comparison:
        return (
            is_grad_of(test.left, p)
            and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) in (cst.Is, cst.IsNot)
            and type(test.comparisons[0].comparator) is cst.Name
            and test.comparisons[0].comparator.value == "None"
        )
    if type(test) is cst.Attribute:
        return test.attr.value == "requires_grad" and type(test.value) is cst.Name and test.value.value == p
    return is_grad_of(test, p)


def _is_grad_mode(item: cst.BaseExpression) -> bool:
    if type(item) is cst.Call:
        item = item.func
    return (dotted_name(item) or "").rsplit(".", 1)[-1] in _GRAD_MODE_CONTEXTS
