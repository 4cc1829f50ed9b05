"""Generation: calls and loops that decode a sequence token by token, and whether what they make is trained on.

The model part `generation` answers:

- `generation_call(call)`: the call generates, by what it is (`why` names the evidence):
  - a `.generate(...)` method of a model: its receiver is a module of the file (`self.policy`,
    `accelerator.unwrap_model(model)`), or is named like a model, or the call passes generation
    settings (`max_new_tokens=`, `num_beams=`, `do_sample=`, `generation_config=`...);
  - another method or function called with generation settings whose name says it decodes
    (`self.decoder.decode_surface(h, max_length=8)`, `sample(model, max_new_tokens=...)`): the
    settings are the evidence, the name breaks the tie with e.g. a padding helper taking `max_length`;
  - a function of this file that generates (runs a decode loop or a generation call itself).
- `decode_loop(loop)`: a `for`/`while` loop that runs a module and grows a sequence with the token it
  picks (`argmax`, `torch.multinomial`, a distribution's `.sample()`), appended or concatenated.
- `feeds_training(node, scope)`: what the generation (the call, or the loop) produces flows into the
  training update of its scope: into the expression a backward pass runs on, into a call that is not
  only logging or decoding to text (a PPO/GRPO update, a replay buffer, a reward model), into a
  returned value or an attribute. Generation that only feeds logs and metrics is monitoring.
"""

from __future__ import annotations

import builtins
from typing import Optional, Union

import libcst as cst

from stabfix.model.calls.modules import ModuleIndex
from stabfix.model.domain.cleanup import is_log_call
from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import children, visit_readonly

Loop = Union[cst.For, cst.While]
_BUILTINS = frozenset(dir(builtins))


class Generation:
    def __init__(self, names: Names, modules: Optional[ModuleIndex]) -> None:
        self.names = names
        self.modules = modules
        self._functions: dict[int, Optional[str]] = {}

    # -- what generates ---------------------------------------------------------------------------------
    def generation_call(self, call: cst.Call, depth: int = 0) -> Optional[str]:
        """Why the call generates (for messages), or None."""
        func = call.func
        last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        settings = {arg.keyword.value for arg in call.args if arg.keyword is not None} & words.GENERATION_SETTINGS
        definition = self.names.definition_of(call)
        if definition is not None:
            return self._generating_function(definition, depth)
        qualified = self.names.qualify(func) or ""
        if qualified.startswith(("torch.", "numpy.", "random.")):
            return None
        if last == "generate" and type(func) is cst.Attribute:
            receiver = func.value
            if settings or self._is_model(receiver):
                return "generates"
            return None
        if settings and words.GENERATION_CALL_WORD.search(last):
            return "decodes with " + ", ".join(f"`{s}=`" for s in sorted(settings))
        return None

    def may_generate(self, call: cst.Call) -> bool:
        """What `generation_call` needs before it can answer: a function of the file called, a `.generate`,
        or generation settings passed (cheap, and false for almost every call of a step)."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "generate":
            return True
        if any(arg.keyword is not None and arg.keyword.value in words.GENERATION_SETTINGS for arg in call.args):
            return True
        return self.names.definition_of(call) is not None

    def _is_model(self, receiver: cst.BaseExpression) -> bool:
        if self.modules is not None and self.modules.is_module(receiver):
            return True
        if type(receiver) is cst.Call:  # `accelerator.unwrap_model(model).generate(...)`
            return any(self._is_model(arg.value) for arg in receiver.args)
        last = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        return any(part in words.MODEL_WORDS for part in last.split("_"))

    def _generating_function(self, function: cst.FunctionDef, depth: int) -> Optional[str]:
        key = id(function)
        if key in self._functions:
            return self._functions[key]
        self._functions[key] = None  # recursion
        found: Optional[str] = None
        if depth < 3:
            for node in _walk(function.body):
                if type(node) in (cst.For, cst.While) and self.decode_loop(node):
                    found = "decodes token by token"
                    break
                if type(node) is cst.Call and self.generation_call(node, depth + 1) is not None:
                    found = "generates"
                    break
        self._functions[key] = found
        return found

    def decode_loop(self, loop: Loop) -> bool:
        picks = grows = forward = False
        for node in _walk(loop.body):
            if type(node) is not cst.Call:
                continue
            func = node.func
            last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
            qualified = self.names.qualify(func) or ""
            if last in ("argmax", "multinomial") or (last == "sample" and not node.args):
                picks = True
            elif last in ("append", "extend") or qualified in ("torch.cat", "torch.stack", "torch.concat"):
                grows = True
            elif self._runs_a_model(node):
                forward = True
        return picks and grows and forward

    def _runs_a_model(self, call: cst.Call) -> bool:
        """A module of the file, or a callable handed in or bound locally (`net(x)` with `net` a parameter)."""
        func = call.func
        if self.modules is not None and self.modules.is_module(func):
            return True
        if self.names.definition_of(call) is not None or self.names.qualify(func) is not None:
            return False
        if type(func) is cst.Attribute:  # `self.decoder(...)`: a callable stored on the object
            return type(func.value) is cst.Name and func.value.value == "self"
        return type(func) is cst.Name and func.value not in _BUILTINS

    # -- where it goes -----------------------------------------------------------------------------------
    def feeds_training(self, node: cst.CSTNode, statement: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """Whether what `node` (a generation call in `statement`, or a decode loop) makes reaches the update."""
        if type(node) in (cst.For, cst.While):
            seeds = {name for inner in _walk(node.body) for name in _targets_of(inner)}
        elif type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
            small = statement.body[0]
            if type(small) is cst.Expr and small.value is node:
                return False  # result thrown away
            if type(small) not in (cst.Assign, cst.AnnAssign, cst.AugAssign) or small.value is not node:
                return True  # handed straight to something else
            seeds = set(_targets_of(small))
        else:
            return True
        flows: list[tuple[set[str], set[str]]] = []  # (targets, names read)
        sinks: set[str] = set()
        for inner in _walk(scope.body if hasattr(scope, "body") else scope):
            if type(inner) in (cst.Assign, cst.AnnAssign, cst.AugAssign) and inner.value is not None:
                targets = set(_targets_of(inner))
                if any(type(t.target) is cst.Attribute for t in getattr(inner, "targets", ())):
                    sinks |= _names_in(inner.value)  # stored on an object: kept for later updates
                flows.append((targets, _names_in(inner.value)))
            elif type(inner) in (cst.Return, cst.Yield) and inner.value is not None:
                sinks |= _names_in(inner.value)
            elif type(inner) is cst.Call:
                func = inner.func
                last = func.attr.value if type(func) is cst.Attribute else ""
                read = set().union(*(_names_in(arg.value) for arg in inner.args)) if inner.args else set()
                if last in ("backward", "manual_backward") or (self.names.qualify(func) or "") == "torch.autograd.backward":
                    sinks |= _names_in(func.value) if type(func) is cst.Attribute else set()
                    sinks |= read
                elif last in ("append", "extend", "add", "insert", "put", "push") and type(func.value) is cst.Name:
                    flows.append(({func.value.value}, read))
            elif type(inner) is cst.Expr and type(inner.value) is cst.Call and not _observes(inner.value.func):
                call = inner.value  # a statement that hands values over (an update, a buffer, a reward model)
                last = call.func.attr.value if type(call.func) is cst.Attribute else ""
                if last not in ("append", "extend", "add", "insert", "put", "push"):  # text decoded for a log table
                    sinks |= set().union(*(_names_in(arg.value, observed=False) for arg in call.args)) if call.args else set()
        derived = set(seeds)
        changed = True
        while changed:
            changed = False
            for targets, read in flows:
                if read & derived and not targets <= derived:
                    derived |= targets
                    changed = True
        return bool(derived & sinks)


def _observes(func: cst.BaseExpression) -> bool:
    """Calls that only look at a value: logging, printing, decoding ids to text, metrics writers."""
    if is_log_call(func):
        return True
    last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    return last in words.OBSERVING_CALLS


def _walk(node: cst.CSTNode):
    """Every node under `node`, nested functions and classes left out."""
    stack = list(children(node)) if not isinstance(node, (list, tuple)) else list(node)
    while stack:
        current = stack.pop(0)
        if type(current) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        yield current
        stack[0:0] = list(children(current))


def _targets_of(node: cst.CSTNode) -> list[str]:
    targets: list[cst.BaseExpression] = []
    if type(node) is cst.Assign:
        targets = [t.target for t in node.targets]
    elif type(node) in (cst.AnnAssign, cst.AugAssign):
        targets = [node.target]
    elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("append", "extend"):
        targets = [node.func.value]
    return [name for target in targets for name in _root_names(target)]


def _root_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _root_names(e.value)]
    if type(target) is cst.StarredElement:
        return _root_names(target.value)
    if type(target) in (cst.Subscript, cst.Attribute):
        return _root_names(target.value)
    return []


def _names_in(node: cst.CSTNode, observed: bool = True) -> set[str]:
    """The variable names an expression reads (attribute and keyword names left out; without `observed`,
    also those read only inside an observing call such as `tokenizer.decode(ids)`)."""
    reads = _Reads(observed)
    visit_readonly(node, reads)
    return reads.found


class _Reads(cst.CSTVisitor):
    def __init__(self, observed: bool) -> None:
        self.observed = observed
        self.found: set[str] = set()

    def visit_Call(self, call: cst.Call) -> bool:
        return self.observed or not _observes(call.func)

    def visit_Name(self, name: cst.Name) -> None:
        self.found.add(name.value)

    def visit_Attribute(self, attribute: cst.Attribute) -> bool:
        visit_readonly(attribute.value, self)
        return False

    def visit_Arg(self, arg: cst.Arg) -> bool:
        visit_readonly(arg.value, self)
        return False
