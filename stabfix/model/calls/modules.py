"""Which callables of a file are torch modules (models): calling one runs a forward pass and returns tensors.

Types are not declared in most training code, but a module gives itself away by what the code does
with it. A callable `X` is a module when the file
- binds it to a `torch.nn` class (`nn.Linear(...)`) or annotates it as one (`encoder: nn.Module`),
- calls module-only methods on it (`X.eval()`, `X.train()`, `X.parameters()`, `X.state_dict()`), also after
  methods that return the module (`X.cuda().eval()`), or
  methods that a callable only has when it is a module (`X.requires_grad_(False)`, `X.to(device)`,
  `X.cuda()`, `X.half()`: a tensor has them too, but a tensor is never called),
- binds it from such a chain (`self.teacher = teacher.eval()`, `encoder = build().to(device)`; a value
  moved to a device, `self.net = load(cfg).to(dev)`, is a module once the file also calls it), or
- calls it with autograd off (under `torch.no_grad()`/`inference_mode()`) and reshapes what it returns
  as a tensor (`self.encoder(tokens).squeeze(0)`): code turns autograd off to run models.

Callables are identified by their dotted spelling in the file (`model`, `self.teacher`); a name
bound to a module anywhere in the file counts everywhere in it (most files use one name for one model).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.devices import DeviceKinds, is_grad_disabling_context, to_call_target
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names

# Methods only a torch.nn.Module has.
_MODULE_METHODS = frozenset(
    {
        "eval",
        "train",
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "modules",
        "named_modules",
        "children",
        "named_children",
        "state_dict",
        "load_state_dict",
        "register_forward_hook",
        "register_buffer",
    }
)
# Methods of a module that return the module itself: `model.to(device).train()` switches `model`.
SELF_RETURNING_METHODS = frozenset(
    {"to", "cuda", "cpu", "xpu", "half", "float", "double", "bfloat16", "type", "train", "eval", "requires_grad_",
     "apply", "share_memory", "to_empty"}
)
# Methods tensors have too: they say "module" only about something that is also called.
_SHARED_METHODS = frozenset({"requires_grad_", "to", "cuda", "half", "bfloat16", "float"})
# Shape methods of arrays: applied to what a call returns under no_grad, they say the call ran a model.
ARRAY_SHAPE_METHODS = frozenset({"squeeze", "unsqueeze", "view", "permute", "reshape", "flatten", "transpose"})


def chain_receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The module a chain of self-returning module methods starts from: `model` for `model.to(d).cuda()`."""
    while (
        type(expr) is cst.Call and type(expr.func) is cst.Attribute
        and expr.func.attr.value in SELF_RETURNING_METHODS
    ):
        expr = expr.func.value
    return expr


class ModuleIndex(cst.BatchableCSTVisitor):
    """Collects the dotted names the file treats as torch modules; ask `is_module(expr)` after the traversal."""

    def __init__(self, imports: ImportTracker, names: Optional[Names] = None) -> None:
        super().__init__()
        self.imports = imports
        self.devices = DeviceKinds(names) if names is not None else None
        self._modules: set[str] = set()
        self._shared: set[str] = set()  # receivers of methods modules share with tensors
        # names bound to a `.to(...)` result: shared unless every such move goes to the host, asked once the
        # bindings of the file are known (`.to(d)` with `d = torch.device("cpu")`, whatever `d` is called)
        self._moved_by_to: dict[str, list[cst.Call]] = {}
        self._called: set[str] = set()
        self._grad_off: list[bool] = [False]  # per function and `with` block: autograd turned off

    def is_module(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` (a name or attribute chain, as called) names a module of this file."""
        name = dotted_name(expr)
        if name is None:
            return False
        if name in self._modules:
            return True
        if name not in self._called:
            return False
        return name in self._shared or any(not self._moves_to_host(move) for move in self._moved_by_to.get(name, ()))

    def _moves_to_host(self, move: cst.Call) -> bool:
        if self.devices is not None:
            return self.devices.moves_to_host(move)
        return to_call_target(move, self.imports.qualify)[0] == "cpu"

    # -- traversal -------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # a nested def runs later, outside any enclosing no_grad block: only its own decorators count
        self._grad_off.append(any(is_grad_disabling_context(d.decorator, self.imports.qualify) for d in node.decorators))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._grad_off.pop()

    def visit_With(self, node: cst.With) -> None:
        off = any(is_grad_disabling_context(item.item, self.imports.qualify) for item in node.items)
        self._grad_off.append(self._grad_off[-1] or off)

    def leave_With(self, original_node: cst.With) -> None:
        self._grad_off.pop()

    def visit_Call(self, node: cst.Call) -> None:
        callee = dotted_name(node.func)
        if callee is not None:
            self._called.add(callee)
        if type(node.func) is cst.Attribute:  # exact types (see node_fields.node_kinds)
            receiver = dotted_name(node.func.value)
            method = node.func.attr.value
            inner = node.func.value
            if method in ARRAY_SHAPE_METHODS and self._grad_off[-1] and type(inner) is cst.Call:
                forward = dotted_name(inner.func)
                if forward is not None and self.imports.qualify(inner.func) is None:
                    self._modules.add(forward)  # `self.encoder(tokens).squeeze(0)` under no_grad
            if method in _MODULE_METHODS and (chained := dotted_name(chain_receiver(inner))) is not None:
                self._modules.add(chained)  # `model.eval()`, `model.cuda().eval()`
            elif receiver is not None and method in _SHARED_METHODS:
                self._shared.add(receiver)

    def visit_Assign(self, node: cst.Assign) -> None:
        built, moved = self._builds_module(node.value), _moved(node.value, self.imports.qualify)
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and built:
                self._modules.add(name)
            elif name is not None and moved and node.value.func.attr.value == "to":  # type: ignore[attr-defined]
                self._moved_by_to.setdefault(name, []).append(node.value)  # type: ignore[arg-type]
            elif name is not None and moved:
                self._shared.add(name)  # `self.net = build(cfg).to(device)`: a module once it is also called

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = dotted_name(node.target)
        if name is None:
            return
        if self._is_module_type(node.annotation.annotation) or (
            node.value is not None and self._builds_module(node.value)
        ):
            self._modules.add(name)

    def visit_Param(self, node: cst.Param) -> None:
        if node.annotation is not None and self._is_module_type(node.annotation.annotation):
            self._modules.add(node.name.value)

    # -- helpers ---------------------------------------------------------------------------------
    def _is_module_type(self, expr: cst.BaseExpression) -> bool:
        name = self.imports.qualify(expr) or ""
        return name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper()

    def _builds_module(self, value: cst.BaseExpression) -> bool:
        """`nn.Linear(...)`, `teacher.eval()`, `build().to(device).eval()`, `copy.deepcopy(model).eval()`."""
        current = value
        while type(current) is cst.Call:  # exact types (see node_fields.node_kinds)
            if type(current.func) is cst.Attribute:
                method = current.func.attr.value
                if method in ("eval", "train") and self.imports.qualify(current.func) is None:
                    return True
                current = current.func.value
                continue
            return self._is_module_type(current.func)
        return False


def _moved(value: cst.BaseExpression, qualify) -> bool:
    """`build(cfg).to(device)`, `Net().cuda()`: a value moved to a device or cast by a method modules share
    with tensors (a `.to(...)` to the host is left out where it is asked: what such a module returns stays there)."""
    if not (type(value) is cst.Call and type(value.func) is cst.Attribute):  # exact types (see node_fields.node_kinds)
        return False
    return value.func.attr.value in _SHARED_METHODS and qualify(value.func) is None
