"""Train/eval mode switches and the code each one governs.

The model's `modes` part (built on `names` and `steps`). During the traversal it records every mode
switch: `X.eval()`, `X.train(False)` (eval) and `X.train()`, `X.train(True)`, `X.train(mode)` (train,
or a mode passed through), with the receiver as spelled (`model`, `self.student`), its statement
place, its function and class, and whether autograd is off there (a `no_grad`/`inference_mode` block
or decorator). A switch anywhere in a chain of methods that return the module counts
(`model.to(device).train()`, `model.eval().cpu()`): its receiver is the chain's start. After the
traversal:

- `region(switch)`: the statements that run in eval mode after an eval switch: the rest of its block
  up to the statement that switches the same receiver (or an enclosing module) back to train mode, or
  rebinds it (`model = Net()`, `self.net = build()`, `for model in models:`) in the switch's own
  scope: the new object is not the one switched to eval (a fresh module is in train mode, any other
  value's mode is unknown). A rebinding whose value reads the receiver (`model = model.to(device)`,
  `model = torch.compile(model)`) keeps it: the module it returns or wraps is the one in eval mode;
- `scan(statements, receiver)`: what runs there: forward passes of the receiver (`model(x)`,
  `model.forward(x)`, a submodule `model.encoder(x)`) and whether each runs with autograd on, backward
  passes and optimizer steps, and code that asks for gradients (`requires_grad_`, `enable_grad`,
  `torch.autograd.grad`). Nested functions and classes are not part of a region (they run later).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from stabfix.model.calls.events import Events
from stabfix.model.calls.modules import chain_receiver
from stabfix.model.flow.gradient_use import is_requires_grad_call
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import GRAD_OFF_CONTEXTS, Names
from stabfix.model.source.places import Place, body_of, called_as_statement, parent_in, position_in
from stabfix.model.source.syntax import TUPLES_AND_LISTS, node_kinds
from stabfix.model.source.node_fields import children, code_children, trivia, visit_readonly

# node types for `type(node) in ...` (see node_fields.node_kinds)
_LOOPS = node_kinds(cst.For, cst.While, cst.BaseComp)

# Methods of a module that are not forward passes.
NOT_FORWARD_METHODS = frozenset(
    {"train", "eval", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "parameters", "named_parameters",
     "buffers", "named_buffers", "modules", "named_modules", "children", "named_children", "state_dict",
     "load_state_dict", "zero_grad", "apply", "requires_grad_", "register_buffer", "register_forward_hook",
     "register_forward_pre_hook", "register_full_backward_hook", "save_pretrained", "generate", "get_input_embeddings",
     "resize_token_embeddings", "share_memory", "add_module", "get_submodule", "extra_repr", "type", "set_mode"}
)
NEEDS_GRAD_CALLS = frozenset({"torch.enable_grad", "torch.autograd.grad", "torch.autograd.backward", "torch.set_grad_enabled"})


@dataclass(eq=False)
class Switch:
    call: cst.Call
    chain: cst.Call  # the whole chain it sits in (`model.eval().cpu()`); the switch itself when alone
    receiver: str  # `model`, `self.student`
    to_eval: bool  # eval() / train(False); False for train() / train(True) / train(mode)
    passed_mode: bool  # `train(mode)`: the mode comes from a variable
    place: Place
    function: Optional[cst.FunctionDef]
    cls: Optional[cst.ClassDef]
    root: Optional[cst.Name]  # the variable the receiver starts from
    names: Names
    order: int  # its place among the `names` model's bindings and uses

    @property
    def grad_off(self) -> bool:
        """Autograd is off where the switch runs (a `no_grad` block or decorator around it)."""
        use = self.names.uses.get(self.root) if self.root is not None else None
        return bool(use and use.grad_off)

    @property
    def freezes(self) -> bool:
        """The chain also freezes the module's parameters (`model.eval().requires_grad_(False)`): its
        forward records no graph unless its input asks for one."""
        link: cst.BaseExpression = self.chain
        while type(link) is cst.Call and type(link.func) is cst.Attribute:
            if link.func.attr.value == "requires_grad_" and not is_requires_grad_call(link):
                return True
            link = link.func.value
        return False


@dataclass(eq=False)
class Rebinding:
    """An assignment to a dotted name (`model = ...`, `self.net = ...`, a `for`/`with`/walrus target)."""
    target: str
    value: Optional[cst.CSTNode]  # what is assigned (a `for`'s iterable); None when unknown
    function: Optional[cst.FunctionDef]
    cls: Optional[cst.ClassDef]
    order: int

    def replaces(self, receiver: str) -> bool:
        """Whether it puts another object where `receiver` was: it assigns the receiver or a module it
        belongs to (`model = ...` for `model.encoder`), from a value that does not read the receiver."""
        return owns(self.target, receiver) and not (self.value is not None and _reads(self.value, receiver))


@dataclass
class RegionFacts:
    forwards: list[tuple[cst.Call, bool]] = field(default_factory=list)  # (call, autograd on)
    repeated: list[cst.Call] = field(default_factory=list)  # forwards inside a loop or comprehension there
    backward: bool = False  # a backward pass or an optimizer step
    needs_grad: bool = False  # code that asks for gradients
    frozen: bool = False  # the receiver's parameters are frozen there (`model.requires_grad_(False)`)
    bound: set[str] = field(default_factory=set)  # names assigned in the region


class ModeSwitches(cst.BatchableCSTVisitor):
    def __init__(self, imports: ImportTracker, names: Names, steps, modules, enclosing: EnclosingDefinitions,
                 events: Events) -> None:
        super().__init__()
        self.imports = imports
        self.names = names
        self.steps = steps
        self.is_module_call = modules.is_module
        self.enclosing = enclosing
        self.events = events
        self._updates: Optional[set[int]] = None
        self.switches: list[Switch] = []
        self._indexed = -1
        self._by_id: tuple[dict[int, list[Switch]], dict[int, list[Switch]]] = ({}, {})
        self._chains: dict[int, cst.Call] = {}  # inner calls of a method chain -> the whole chain
        self.rebindings: list[Rebinding] = []
        self._rebound_at: dict[int, list[Rebinding]] = {}  # id of each node of a rebinding's place -> it
        self._scanned: dict[tuple[tuple[int, ...], str], RegionFacts] = {}  # `scan`'s answers
        self._rebound_in: dict[int, list[Rebinding]] = {}  # id of its function -> it
        self.classes = None  # the file's module classes (`ModuleClasses`), set by the model when built

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        chain = self._chains.pop(id(node), node)
        if type(func) is not cst.Attribute:  # exact types (see node_fields.node_kinds)
            return
        if type(func.value) is cst.Call:
            self._chains[id(func.value)] = chain  # the outer call is visited first
        if func.attr.value not in ("eval", "train"):
            return
        module = chain_receiver(func.value)
        receiver = dotted_name(module)
        if receiver is None or self.imports.qualify(module):
            return  # `ast.literal_eval`, `torch.eval`: not a module
        args = [arg for arg in node.args if not arg.star]
        if func.attr.value == "eval":
            if args:
                return
            to_eval, passed = True, False
        elif not args:
            to_eval, passed = False, False
        elif type(args[0].value) is cst.Name and args[0].value.value in ("True", "False"):
            to_eval, passed = args[0].value.value == "False", False
        else:
            to_eval, passed = False, True
        root = module
        while type(root) is cst.Attribute:
            root = root.value
        function, cls = self.enclosing.innermost_function(), self.enclosing.innermost_class()
        self.switches.append(Switch(node, chain, receiver, to_eval, passed, self.steps.place(), function, cls,
                                    root if type(root) is cst.Name else None, self.names, self.names.position))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._rebind(node, target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._rebind(node, node.target, node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._rebind(node, node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._rebind(node, node.target, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._rebind(node, node.asname.name, None)

    def _rebind(self, node: cst.CSTNode, target: cst.BaseExpression, value: Optional[cst.CSTNode]) -> None:
        if type(target) in TUPLES_AND_LISTS:
            for element in target.elements:  # `model, opt = build()`: each is rebound, from the whole value
                self._rebind(node, element.value, value)
            return
        spelled = dotted_name(target)
        if spelled is None:
            return
        rebinding = Rebinding(spelled, value, self.enclosing.innermost_function(), self.enclosing.innermost_class(),
                              self.names.position)
        self.rebindings.append(rebinding)
        # indexed as it is found: "does this statement rebind the receiver" is asked for every statement of a region
        for part in dict.fromkeys(id(part) for part in (*self.steps.place(), node)):
            self._rebound_at.setdefault(part, []).append(rebinding)
        self._rebound_in.setdefault(id(rebinding.function), []).append(rebinding)

    # -- queries -------------------------------------------------------------------------------------
    def statement_of(self, switch: Switch) -> tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
        """The line that is the switch (or the chain it sits in) alone, and the block it sits in."""
        line = called_as_statement(switch.place, switch.chain)
        block = parent_in(switch.place, line) if line is not None else None
        return line, block

    def region(self, switch: Switch) -> list[cst.CSTNode]:
        """The statements after an eval switch in its block, up to the one that switches back."""
        line, block = self.statement_of(switch)
        siblings = body_of(block)
        index = position_in(siblings, line) if line is not None else None
        if index is None:
            return []
        region: list[cst.CSTNode] = []
        for statement in siblings[index + 1:]:
            if self.restores(statement, switch.receiver) or self.rebinds(statement, switch):
                break
            region.append(statement)
        return region

    def restores(self, node: cst.CSTNode, receiver: str) -> bool:
        """The statement switches `receiver` (or a module it belongs to) back to train mode."""
        return any(owns(other.receiver, receiver) for other in self._index()[1].get(id(node), ()))

    def rebinds(self, node: cst.CSTNode, switch: Switch) -> bool:
        """The statement puts another object where the switch's receiver was, in the switch's scope (not in a
        function or class defined there)."""
        return any(
            rebinding.function is switch.function and rebinding.cls is switch.cls
            and rebinding.replaces(switch.receiver)
            for rebinding in self._rebound_at.get(id(node), ())
        )

    def in_function(self, function: Optional[cst.FunctionDef]) -> list[Switch]:
        return list(self._index()[0].get(id(function), ()))

    def _index(self) -> tuple[dict[int, list[Switch]], dict[int, list[Switch]]]:
        """The switches by id of their function, and the train switches by id of each node of their place:
        asked for every switch and statement, so built once (again if switches were added since)."""
        if self._indexed != len(self.switches):
            by_function: dict[int, list[Switch]] = {}
            trains_at: dict[int, list[Switch]] = {}
            for switch in self.switches:
                by_function.setdefault(id(switch.function), []).append(switch)
                if not switch.to_eval:
                    for part in dict.fromkeys(id(part) for part in switch.place):
                        trains_at.setdefault(part, []).append(switch)
            self._by_id = (by_function, trains_at)
            self._indexed = len(self.switches)
        return self._by_id

    def mode_before(self, receiver: str, function: Optional[cst.FunctionDef], order: int) -> Optional[str]:
        """"train" or "eval": what the last switch of `receiver` (or a module it belongs to) before `order`
        in `function` set; None when there is none (or `train(mode)` passes a mode through)."""
        last = None
        for switch in self.in_function(function):
            if switch.order < order and owns(switch.receiver, receiver):
                last = switch
        if last is None or last.passed_mode:
            return None
        if any(last.order < rebinding.order < order and rebinding.replaces(receiver)
               for rebinding in self._rebound_in.get(id(function), ())):
            return None  # another object since the switch: its mode is not the switch's
        return "eval" if last.to_eval else "train"

    def rebound_between(self, receiver: str, function: Optional[cst.FunctionDef], start: int, end: int) -> bool:
        """Whether `function` puts another object where `receiver` was between two orders (a loop's start and
        end: each iteration then switches a new object, `model = Net()` at the top of a per-fold loop)."""
        return any(start <= rebinding.order < end and rebinding.replaces(receiver)
                   for rebinding in self._rebound_in.get(id(function), ()))

    def caller_spelling(self, call: cst.Call, helper: cst.FunctionDef, receiver: str) -> Optional[str]:
        """What a call of `helper` passes for the module the helper knows as `receiver`: `model` for
        `evaluate(model, loader)` when the helper switches its first parameter; `self.net` stays `self.net`."""
        root, _, rest = receiver.partition(".")
        params = [p.name.value for p in helper.params.params]
        if root == "self" or root not in params:
            return receiver if root == "self" else None
        index = params.index(root) - (1 if params and params[0] == "self" else 0)
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == root]
        passed = keyword[0] if keyword else positional[index] if 0 <= index < len(positional) else None
        spelled = dotted_name(passed) if passed is not None else None
        return None if spelled is None else spelled + ("." + rest if rest else "")

    def is_update(self, call: cst.Call) -> bool:
        """A backward pass or an optimizer step, as the `events` part reads them (an environment's
        `obs, reward, ... = env.step(a)` is neither)."""
        if self._updates is None:
            self._updates = {id(event.node) for event in self.events.of_kind("backward", "step")}
        return id(call) in self._updates

    def module_method(self, call: cst.Call, receiver: str) -> Optional[cst.FunctionDef]:
        """The method a call on the switched module runs when its class is not shown at the call
        (`model.validation_step(batch)` on a parameter `model`): the one method of that name among the
        file's `nn.Module` subclasses (a switched receiver is a module). None when no class or several
        define it."""
        func = call.func
        if self.classes is None or type(func) is not cst.Attribute or dotted_name(func.value) != receiver:
            return None
        found = [
            item for node in self.names.scopes if type(node) is cst.ClassDef and type(node.body) is cst.IndentedBlock
            for item in node.body.body
            if type(item) is cst.FunctionDef and item.name.value == func.attr.value and self.classes.is_module_class(node)
        ]
        return found[0] if len(found) == 1 else None

    def scan(self, statements: list[cst.CSTNode], receiver: str) -> RegionFacts:
        """What a region does with the module `receiver` (ask after the traversal; several rules ask about
        the same region: scanned once, and the facts shared, read only)."""
        key = (tuple(id(statement) for statement in statements), receiver)
        facts = self._scanned.get(key)
        if facts is None:
            facts = self._scanned[key] = RegionFacts()
            scanner = _RegionScanner(self, receiver, facts)
            for statement in statements:
                visit_readonly(statement, scanner)
        return facts


# same-file calls followed below a region when looking for the switched module's forwards
MAX_CALL_DEPTH = 3


class _RegionScanner(cst.CSTVisitor):
    def __init__(self, modes: ModeSwitches, receiver: str, facts: RegionFacts, depth: int = 0,
                 grad_off: bool = False, entered: tuple[cst.FunctionDef, ...] = ()) -> None:
        self.modes = modes
        self.receiver = receiver
        self.facts = facts
        self.grad_off = [grad_off]
        self.loops = 0
        self.depth = depth
        self.entered = entered  # the functions this scan is inside of (recursion guard)

    # set as `visit_<Loop>`/`leave_<Loop>` for each loop type below: a walk calls a visitor's own methods
    # only (see node_fields.visit_readonly), where an `on_visit` of its own is called for every node
    def _enter_loop(self, node: cst.CSTNode) -> None:
        self.loops += 1

    def _leave_loop(self, original_node: cst.CSTNode) -> None:
        self.loops -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_With(self, node: cst.With) -> None:
        off = any((self.modes.names.qualify(_callee(item.item)) or "") in GRAD_OFF_CONTEXTS for item in node.items)
        self.grad_off.append(self.grad_off[-1] or off)

    def leave_With(self, original_node: cst.With) -> None:
        self.grad_off.pop()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        for name in _target_names(node.target):
            self.facts.bound.add(name)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = dotted_name(func) or ""
        qualified = self.modes.names.qualify(func) or ""
        if self.modes.is_update(node):
            self.facts.backward = True
        if qualified in NEEDS_GRAD_CALLS or is_requires_grad_call(node):
            self.facts.needs_grad = True
        elif type(func) is cst.Attribute and func.attr.value == "requires_grad_" \
                and dotted_name(chain_receiver(func.value)) == self.receiver:
            self.facts.frozen = True  # `model.requires_grad_(False)`
        if callee == self.receiver or callee == self.receiver + ".forward" or (
            callee.startswith(self.receiver + ".") and callee.rsplit(".", 1)[-1] not in NOT_FORWARD_METHODS
            and "." not in callee[len(self.receiver) + 1:]
            and (self.modes.is_module_call(func) or self._fed_a_tensor(node))
        ):
            self.facts.forwards.append((node, not self.grad_off[-1]))
            if self.loops:
                self.facts.repeated.append(node)
        else:
            self._follow(node)

    def _follow(self, call: cst.Call) -> None:
        """A function of the file called in the region, that the switched module reaches (`self.validation_step(b)`
        reaching `self.model`, `evaluate(model, b)` its parameter): its forwards count as run at the call, any
        number of calls deep up to MAX_CALL_DEPTH, unless it runs a backward or an optimizer step or asks for
        gradients (it trains or differentiates: not an evaluation; the region's own code decides the rest)."""
        if self.depth >= MAX_CALL_DEPTH:
            return
        definition = self.modes.names.definition_of(call) or self.modes.module_method(call, self.receiver)
        if definition is None or definition in self.entered:
            return
        receiver = _receiver_in(definition, call, self.receiver, self.modes.names)
        if receiver is None:
            return
        inner = RegionFacts()
        grad_off = self.grad_off[-1] or definition in self.modes.names.grad_off_functions
        scanner = _RegionScanner(self.modes, receiver, inner, self.depth + 1, grad_off, (*self.entered, definition))
        visit_readonly(definition.body, scanner)
        if inner.backward or inner.needs_grad:
            return  # it trains or differentiates (an attack, a penalty): not an evaluation forward; that code is the caller's
        self.facts.frozen |= inner.frozen
        if inner.forwards:
            self.facts.forwards.append((call, any(on for _, on in inner.forwards)))
            if self.loops or inner.repeated:
                self.facts.repeated.append(call)

    def _fed_a_tensor(self, call: cst.Call) -> bool:
        """A method of the switched module called on a tensor (`agent.get_action_and_value(obs.to(d))`,
        `model.encode(x)`): a forward through one of its own methods."""
        values = self.modes.steps.values
        if values is None:
            return False
        for arg in call.args:
            if arg.keyword is None and not arg.star:
                value = values.value_of(arg.value)
                if (value.tensor or value.placed or value.batch) and not (value.not_tensor or value.metadata):
                    return True
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if dotted_name(value) is not None and any(
            type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad" for t in node.targets
        ):
            self.facts.needs_grad = True


for _loop in _LOOPS:
    setattr(_RegionScanner, "visit_" + _loop.__name__, _RegionScanner._enter_loop)
    setattr(_RegionScanner, "leave_" + _loop.__name__, _RegionScanner._leave_loop)


def _receiver_in(definition: cst.FunctionDef, call: cst.Call, receiver: str, names: Names) -> Optional[str]:
    """How a function of the file spells the caller's `receiver`: `self.model` stays `self.model` in a method
    called on the same object (`self.validation_step(b)`); a module passed as an argument is the parameter
    it binds (`evaluate(model, b)`, `model.encoder` passed for `net`: `net`)."""
    params = [param.name.value for param in definition.params.params]
    scope = names.scopes.get(definition)
    is_method = scope is not None and scope.parent is not None and scope.parent.is_class
    func = call.func
    if is_method and params and type(func) is cst.Attribute:
        owner = dotted_name(func.value)
        root, dot, rest = receiver.partition(".")
        if owner is not None and owner == root and dot:
            return params[0] + dot + rest
        if owner == receiver:
            return params[0]  # a method of the switched module itself (`model.validation_step(b)`): its `self`
        params = params[1:]
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        spelled = dotted_name(arg.value)
        if spelled != receiver:
            continue
        if arg.keyword is not None:
            return arg.keyword.value if arg.keyword.value in params else None
        index = positional.index(arg)
        return params[index] if index < len(params) else None
    return None


def _callee(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.func if type(expr) is cst.Call else expr


def _target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _target_names(element.value)]
    return []


def _reads(value: cst.CSTNode, receiver: str) -> bool:
    """The value reads the receiver or a part of it (`model.to(device)`, `compile(model)`, `model.encoder`)."""
    finder = _ReceiverReads(receiver)
    visit_readonly(value, finder)
    return finder.found


class _ReceiverReads(cst.CSTVisitor):
    def __init__(self, receiver: str) -> None:
        self.receiver = receiver
        self.found = False

    def visit_Name(self, node: cst.Name) -> bool:
        if not self.found and owns(self.receiver, node.value):
            self.found = True
        return not self.found

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.found:
            return False
        spelled = dotted_name(node)
        if spelled is not None and owns(self.receiver, spelled):
            self.found = True
        else:
            visit_readonly(node.value, self)  # not its attribute's name: `build().model` does not read `model`
        return False


def in_harness(function: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef] = None) -> bool:
    """Test, check and benchmark code (`test_*`, `_check_outputs`, a `Test*` class): it switches modes to
    compare behaviours, not to evaluate a model."""
    if cls is not None and cls.name.value.startswith("Test") and not _has_constructor(cls):
        return True  # pytest collects `Test*` classes only when they define no `__init__`
    if function is None or not vocab.HARNESS_FUNCTION.match(function.name.value):
        return False
    return _asserts(function)  # `def test(model, loader)` of a training script evaluates; a pytest test asserts


def _has_constructor(cls: cst.ClassDef) -> bool:
    body = cls.body.body if type(cls.body) is cst.IndentedBlock else ()
    return any(type(statement) is cst.FunctionDef and statement.name.value == "__init__" for statement in body)


def _asserts(function: cst.FunctionDef) -> bool:
    finder = _AssertFinder()
    visit_readonly(function, finder)
    return finder.found


class _AssertFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Assert(self, node: cst.Assert) -> None:
        self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted_name(node.func) or ""
        if name.rsplit(".", 1)[-1].startswith(("assert", "allclose")):
            self.found = True


def owns(outer: str, inner: str) -> bool:
    """`model.train()` switches `model.encoder` back too: `train()` recurses into submodules."""
    return inner == outer or inner.startswith(outer + ".")


def within(node: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """Whether `node` is part of `statement`."""
    # a node that is not trivia is never below trivia: the search leaves trivia out
    below = children if type(node) in trivia() else code_children
    pending = [statement]
    while pending:
        current = pending.pop()
        if current is node:
            return True
        pending.extend(below(current))
    return False
