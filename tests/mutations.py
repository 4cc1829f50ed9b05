"""Equivalence mutations of the rule examples: does a rule still see its anti-pattern (and still stay
silent on its near misses) when the same program is spelled another way?

Every bad example and every near miss of every rule (rules/*.yaml) is rewritten into equivalent
programs, one mutation at a time:

- `device_move`: a tensor-producing call gets a chained `.cuda()` (`t.detach().requires_grad_().cuda()`);
- `cast`: a float-valued call gets a chained `.float()`;
- `tuple_assignment`: two consecutive assignments become one (`a, b = x, y`);
- `same_file_helper`: one statement moves into a module-level function of the same file that
  returns the value (`y = helper_1(y)`);
- `other_module_helper`: the same, with the function in `helpers.py` of a two-file package;
- `method`: the same, with the function a method of the enclosing class (or of a new class);
- `passed_in`: an object a function constructs (a loss, a model, a scaler) is built by its callers
  and handed in as an argument;
- `module_script`: a top-level function's body becomes a module-level script;
- `neutral_names`: every variable, parameter (including `self`) and attribute the file assigns on
  `self` gets a neutral name (`a`, `b`, `c`...);
- `receiver_renamed`: only `self` and `cls` are renamed, which tells a rule that leans on the
  `self.` spelling from one that leans on vocabulary words.

A mutation that cannot apply (nothing to rewrite, or the rewrite would change the meaning, such as
a device move for a rule about devices) is recorded as not applicable, never forced. A mutation
that rewrites one statement makes one variant per statement (at most `MAX_SITES`: those nearest the
original finding for a bad example, spread evenly over the file for a near miss); an example is kept only if every variant still fires, and a near miss
raises a false alarm if any variant fires. Every variant must compile.

All variants of one rule are written into one temporary tree (multi-file ones as a package) and
scanned by the real CLI (`stabfix scan --output-format json`), so that whatever the CLI does across
files is exercised.

    python tests/mutations.py --table             # the matrix, as markdown
    python tests/mutations.py --details           # every lost example and false alarm
    python tests/mutations.py --update-baseline   # rewrite tests/mutation_baseline.json
    python tests/mutations.py --blame-names       # which single rename changes a rule's answer
    python tests/mutations.py --rule SF420 --show "seeded two | method"   # print those variants
"""

from __future__ import annotations

import argparse
import builtins
import json
import keyword
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterator, Sequence

import libcst as cst
from libcst import matchers as m
from libcst.metadata import (
    BuiltinAssignment,
    GlobalScope,
    ImportAssignment,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from stabfix.catalog import load_catalog  # noqa: E402

BASELINE = Path(__file__).with_name("mutation_baseline.json")

MUTATIONS = (
    "device_move",
    "cast",
    "tuple_assignment",
    "same_file_helper",
    "other_module_helper",
    "method",
    "passed_in",
    "module_script",
    "neutral_names",
    "receiver_renamed",
)
MAX_SITES = 4

# The rules whose very subject a mutation would change: a device move on a rule about what lives on
# the accelerator, a cast on a rule about dtypes or precision.
NOT_APPLICABLE_TO = {
    "device_move": {
        "SF102": "the rule is about where a tensor lives",
        "SF105": "the rule is about where a tensor lives",
        "SF107": "the rule is about where loaded tensors land",
        "SF202": "on the host a read is no synchronisation: the device decides the finding",
        "SF301": "autocast's dtype depends on the device the tensors are on",
        "SF304": "autocast's dtype depends on the device the tensors are on",
    },
    "cast": {
        "SF104": "a cast of the logits is part of what the rule measures",
        "SF301": "the rule is about the precision of the computation",
        "SF304": "the rule is about the dtype's smallest step",
    },
}
# The meta rule judges where suppression comments sit: a rewrite that moves a statement (and its
# finding) away from its comment, or changes which line a finding starts on, changes its answer.
for _moving in ("device_move", "cast", "tuple_assignment", "same_file_helper", "other_module_helper", "method",
               "passed_in", "module_script"):
    NOT_APPLICABLE_TO.setdefault(_moving, {})["SF001"] = "moving code moves findings away from their suppression comments"

# Calls whose result is a tensor (a method or function name, the last part of the callee).
TENSOR_CALLS = {
    "requires_grad_", "detach", "clone", "float", "double", "half", "bfloat16", "view", "reshape",
    "flatten", "squeeze", "unsqueeze", "contiguous", "tensor", "as_tensor", "from_numpy", "zeros", "ones",
    "randn", "rand", "randint", "empty", "full", "arange", "zeros_like", "ones_like", "randn_like",
    "rand_like", "empty_like", "full_like", "stack", "cat", "Variable", "softmax", "log_softmax", "sigmoid",
    "exp", "log", "tanh", "mean", "sum", "gather", "permute", "transpose", "expand", "repeat", "narrow",
    "abs", "pow", "sqrt", "norm", "matmul", "mm", "bmm",
}
# Calls whose result is a floating tensor, so that `.float()` keeps its value (up to precision).
FLOAT_CALLS = {
    "requires_grad_", "float", "softmax", "log_softmax", "sigmoid", "tanh", "exp", "randn", "rand",
    "randn_like", "rand_like", "mse_loss", "l1_loss", "smooth_l1_loss", "cross_entropy", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
}
DEVICE_MOVES = {"to", "cuda", "cpu"}
# Attributes that a base class (torch, Lightning, Hugging Face) reads by name: renaming them would
# change the program.
RESERVED_ATTRIBUTES = {
    "training", "device", "dtype", "data", "grad", "requires_grad", "weight", "bias", "T", "shape",
    "automatic_optimization", "hparams", "trainer", "current_epoch", "global_step", "model", "args",
    "optimizer", "lr_scheduler", "accelerator", "state", "config", "forward", "log", "logger",
}


@dataclass(frozen=True)
class Variant:
    """One mutated program: its files (relative path -> source)."""

    files: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ExampleProject:
    """Where an example lives: its own path and the other files of its project (`path:` and `files:`
    of its YAML entry). Every variant keeps them, so that a rule that reads across files, or judges a
    file by its path (a test file, a package's `__main__.py`), sees the variant as it sees the example."""

    path: str = "example.py"
    files: tuple[tuple[str, str], ...] = ()

    def others(self) -> dict[str, str]:
        return dict(self.files)

    def place(self, variant: "Variant") -> "Variant":
        """A one-file variant (written as `example.py`) put at the example's path, beside its files."""
        files = dict(variant.files)
        if set(files) != {"example.py"}:
            return variant
        return Variant(tuple(sorted({**self.others(), self.path: files["example.py"]}.items())))

    def helper_layout(self) -> tuple[str, str, bool]:
        """(the example's path, a new module beside it, whether it is imported relatively). A lone
        example becomes `pkg/main.py` and `pkg/helpers.py`; an example with a project gets a module
        of a free name in its own folder, relative only inside a package."""
        if not self.files and self.path == ExampleProject.path:
            return "pkg/main.py", "pkg/helpers.py", True
        folder = Path(self.path).parent
        taken = {*self.others(), self.path}
        stem, index = "helpers", 0
        while (folder / f"{stem}.py").as_posix() in taken:
            index += 1
            stem = f"helpers_{index}"
        in_package = (folder / "__init__.py").as_posix() in taken
        return self.path, (folder / f"{stem}.py").as_posix(), in_package


@dataclass
class Mutated:
    """What one mutation made of one example: its variants, or why it does not apply."""

    variants: list[Variant] = field(default_factory=list)
    not_applicable: str | None = None


# ---------------------------------------------------------------------------------------------------
# Reading a program


class Program:
    """One parsed example with the metadata the mutations need."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = self.wrapper.module
        self.scopes = self.wrapper.resolve(ScopeProvider)
        self.parents = self.wrapper.resolve(ParentNodeProvider)
        self.positions = self.wrapper.resolve(PositionProvider)

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        while self.parents.get(node) is not self.module:
            node = self.parents[node]
        return node

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        node = self.parents.get(node)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            node = self.parents.get(node)
        return node if isinstance(node, cst.FunctionDef) else None

    def enclosing_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        body = self.parents.get(function)
        owner = self.parents.get(body) if body is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def in_class_body(self, node: cst.CSTNode) -> bool:
        node = self.parents.get(node)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
            if isinstance(node, cst.ClassDef):
                return True
            node = self.parents.get(node)
        return False

    @cached_property
    def identifiers(self) -> frozenset[str]:
        return frozenset(node.value for node in _nodes(self.module, cst.Name))

    def module_imports(self) -> list[cst.CSTNode]:
        return [
            statement for statement in self.module.body
            if m.matches(statement, m.SimpleStatementLine(body=[m.OneOf(m.Import(), m.ImportFrom())]))
        ]


def _callee_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _names_read(node: cst.CSTNode) -> set[str]:
    return {name.value for name in _nodes(node, cst.Name)}


def _nodes(node: cst.CSTNode, kind: type) -> list:
    """Every node of a type under `node` (a plain walk: matchers are too slow for the whole matrix)."""
    return [child for child in _walk(node) if isinstance(child, kind)]


def _unsafe_to_move(node: cst.CSTNode) -> bool:
    """Code whose meaning depends on the function it is written in."""
    for child in _walk(node):
        if isinstance(child, (cst.Yield, cst.Await, cst.NamedExpr, cst.Return)):
            return True
        if isinstance(child, cst.Call) and isinstance(child.func, cst.Name) and child.func.value in ("super", "locals", "vars"):
            return True
    return False


def _grad_read_names(program: Program) -> set[str]:
    return {
        attribute.value.value
        for attribute in (a for a in _nodes(program.module, cst.Attribute) if isinstance(a.value, cst.Name) and a.attr.value == "grad")
    }


def _free_names(program: Program, statement: cst.CSTNode, foreign: bool) -> list[str]:
    """Names the statement reads that a module-level helper takes as arguments: bound in an enclosing
    function or a variable of the module; with `foreign` (the helper lives in another module) also
    the module's functions and classes (its imports are repeated there). In order of first appearance."""
    outer = program.scopes.get(statement)
    inner = {program.scopes[node] for node in _walk(statement) if node in program.scopes} - {outer}
    found: list[str] = []
    for name in _nodes(statement, cst.Name):
        scope = program.scopes.get(name)
        if scope is None or name.value in found:
            continue
        accesses = [access for access in scope.accesses[name.value] if access.node is name]
        if not accesses:
            continue  # a store, an attribute, a keyword
        referents = {assignment for access in accesses for assignment in access.referents}
        if not referents:
            continue  # a builtin or an undefined global: the helper sees it the same way
        for assignment in referents:
            if isinstance(assignment, BuiltinAssignment) or assignment.scope in inner:
                continue
            if not isinstance(assignment.scope, GlobalScope):
                found.append(name.value)
                break
            # a module variable is handed in too (a helper is a function of its arguments); another
            # module also needs the file's functions and classes, only imports it can repeat
            if isinstance(assignment, ImportAssignment):
                continue
            if foreign or not isinstance(assignment.node, (cst.FunctionDef, cst.ClassDef)):
                found.append(name.value)
                break
    return found


# libcst computes `node.children` anew on every read (a visit of the node); the generators walk the same
# immutable trees again and again, so each node's children are read once. The cache holds the node
# itself, so its id cannot be reused while the entry lives; it is emptied when it grows large.
_CHILDREN: dict[int, tuple[cst.CSTNode, Sequence[cst.CSTNode]]] = {}
_CHILDREN_KEPT = 200_000


def _children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    entry = _CHILDREN.get(id(node))
    if entry is None or entry[0] is not node:
        if len(_CHILDREN) >= _CHILDREN_KEPT:
            _CHILDREN.clear()
        entry = _CHILDREN[id(node)] = (node, node.children)
    return entry[1]


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and everything under it, parents before children, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(_children(current)))


def _fresh(program: Program, stem: str, taken: set[str] | None = None) -> str:
    used = program.identifiers | (taken or set())
    index = 1
    while f"{stem}_{index}" in used:
        index += 1
    return f"{stem}_{index}"


def _by_focus(program: Program, sites: list, focus: Sequence[int], key=lambda site: site) -> list:
    """At most MAX_SITES sites: those nearest the original finding's lines for a bad example, sites
    spread evenly over the file for a near miss."""
    ordered = sorted(sites, key=lambda site: program.line(key(site)))
    if focus:
        def distance(site) -> tuple[int, int]:
            line = program.line(key(site))
            return (min(abs(line - wanted) for wanted in focus), line)

        return sorted(sites, key=distance)[:MAX_SITES]
    if len(ordered) <= MAX_SITES:
        return ordered
    step = (len(ordered) - 1) / (MAX_SITES - 1)
    return [ordered[round(index * step)] for index in range(MAX_SITES)]


def _single(files: dict[str, str]) -> Variant:
    return Variant(tuple(sorted(files.items())))


class _Replace(cst.CSTTransformer):
    """Replace nodes (by identity; a callable replacement gets the updated node) and insert statements
    before or after a top-level statement."""

    def __init__(self, replacements: dict, before: dict | None = None, after: dict | None = None) -> None:
        super().__init__()
        self.replacements = replacements
        self.before = before or {}
        self.after = after or {}

    def on_leave(self, original, updated):
        if original in self.replacements:
            replacement = self.replacements[original]
            updated = replacement(updated) if callable(replacement) else replacement
        else:
            updated = super().on_leave(original, updated)
        if original in self.before or original in self.after:
            kept = list(updated.nodes) if isinstance(updated, cst.FlattenSentinel) else [updated]
            if isinstance(updated, cst.RemovalSentinel):
                kept = []
            return cst.FlattenSentinel([*self.before.get(original, []), *kept, *self.after.get(original, [])])
        return updated


def _rewrite(program: Program, replacements, before=None, after=None) -> str:
    return program.module.visit(_Replace(replacements, before, after)).code


# ---------------------------------------------------------------------------------------------------
# Chained device moves and casts


def _chain(program: Program, focus: Sequence[int], method: str, wanted: set[str], skip: set[str]) -> Mutated:
    grad_read = _grad_read_names(program)
    sites = []
    for call in _nodes(program.module, cst.Call):
        name = _callee_name(call)
        keyword_marks = any(
            m.matches(arg, m.Arg(keyword=m.Name("requires_grad"), value=m.Name("True"))) for arg in call.args
        )
        if name in skip or not (name in wanted or (method == "float" and keyword_marks and name in TENSOR_CALLS)):
            continue
        parent = program.parents.get(call)
        if isinstance(parent, (cst.Attribute, cst.Expr)):
            continue  # already chained on, or a statement whose value is dropped
        if isinstance(parent, cst.Assign) and any(
            m.matches(target.target, m.Name()) and target.target.value in grad_read for target in parent.targets
        ):
            continue  # a leaf whose `.grad` is read: after the chain it would not be a leaf
        sites.append(call)
    if not sites:
        return Mutated(not_applicable=f"no tensor-valued call to chain `.{method}()` onto")
    variants = []
    for call in _by_focus(program, sites, focus):
        chained = cst.Call(func=cst.Attribute(value=call, attr=cst.Name(method)))
        variants.append(_single({"example.py": _rewrite(program, {call: chained})}))
    return Mutated(variants)


def device_move(program: Program, focus: Sequence[int]) -> Mutated:
    return _chain(program, focus, "cuda", TENSOR_CALLS, DEVICE_MOVES)


def cast(program: Program, focus: Sequence[int]) -> Mutated:
    return _chain(program, focus, "float", FLOAT_CALLS, {"float", "double", "half", "long", "int", "bool"})


# ---------------------------------------------------------------------------------------------------
# Two assignments as one tuple assignment


def _assignment(statement: cst.CSTNode) -> cst.Assign | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    if not isinstance(assign.targets[0].target, (cst.Name, cst.Attribute, cst.Subscript)):
        return None
    return assign


def _root(target: cst.CSTNode) -> str | None:
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def tuple_assignment(program: Program, focus: Sequence[int]) -> Mutated:
    pairs = []
    for block in _nodes(program.module, (cst.Module, cst.IndentedBlock)):
        body = list(block.body)
        for first, second in zip(body, body[1:]):
            one, two = _assignment(first), _assignment(second)
            if one is None or two is None:
                continue
            root = _root(one.targets[0].target)
            if root is None or root in _names_read(two.value):
                continue  # the second value reads what the first assigns
            if _unsafe_to_move(two.value) or _unsafe_to_move(one.value):
                continue
            pairs.append((first, second, one, two))
    if not pairs:
        return Mutated(not_applicable="no two consecutive independent assignments")
    variants = []
    for first, second, one, two in _by_focus(program, pairs, focus, key=lambda pair: pair[0]):
        merged = cst.Assign(
            targets=[cst.AssignTarget(cst.Tuple([cst.Element(one.targets[0].target), cst.Element(two.targets[0].target)],
                                                lpar=[], rpar=[]))],
            value=cst.Tuple([cst.Element(one.value), cst.Element(two.value)], lpar=[], rpar=[]),
        )
        line = first.with_changes(body=[merged], trailing_whitespace=second.trailing_whitespace)
        variants.append(_single({"example.py": _rewrite(program, {first: line, second: cst.RemoveFromParent()})}))
    return Mutated(variants)


# ---------------------------------------------------------------------------------------------------
# One statement moved into a helper (same file, other module, method)


@dataclass
class _Extraction:
    line: cst.SimpleStatementLine
    statement: cst.BaseSmallStatement
    params: list[str]
    targets: cst.BaseAssignTargetExpression | None  # what the call site assigns the helper's value to
    body: list[cst.BaseStatement]


def _extractable(program: Program, foreign: bool) -> list[_Extraction]:
    found = []
    for line in _nodes(program.module, cst.SimpleStatementLine):
        if len(line.body) != 1 or program.in_class_body(line):
            continue
        statement = line.body[0]
        if not isinstance(statement, (cst.Assign, cst.AugAssign, cst.Expr)):
            continue
        if isinstance(statement, cst.Expr) and not isinstance(statement.value, cst.Call):
            continue  # a docstring, a bare name
        if _unsafe_to_move(statement):
            continue
        params = _free_names(program, statement, foreign)
        value_stored: cst.BaseAssignTargetExpression | None = None
        if isinstance(statement, cst.Assign):
            if len(statement.targets) != 1:
                continue
            target = statement.targets[0].target
            if m.matches(target, m.Name() | m.Tuple(elements=[m.ZeroOrMore(m.Element(value=m.Name()))])):
                value_stored = target
                body = [cst.SimpleStatementLine([cst.Return(statement.value)])]
            else:
                body = [cst.SimpleStatementLine([statement])]
        elif isinstance(statement, cst.AugAssign):
            if not isinstance(statement.target, cst.Name):
                continue
            value_stored = statement.target
            if statement.target.value not in params:
                params.append(statement.target.value)
            body = [cst.SimpleStatementLine([statement]), cst.SimpleStatementLine([cst.Return(statement.target)])]
        else:
            body = [cst.SimpleStatementLine([cst.Return(statement.value)])]
        found.append(_Extraction(line, statement, params, value_stored, body))
    return found


def _call_line(extraction: _Extraction, func: cst.BaseExpression, args: list[str]) -> cst.SimpleStatementLine:
    call = cst.Call(func=func, args=[cst.Arg(cst.Name(name)) for name in args])
    if extraction.targets is not None:
        statement: cst.BaseSmallStatement = cst.Assign([cst.AssignTarget(extraction.targets)], call)
    else:
        statement = cst.Expr(call)
    return extraction.line.with_changes(body=[statement])


def _helper_def(name: str, params: list[str], body: list[cst.BaseStatement]) -> cst.FunctionDef:
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters([cst.Param(cst.Name(param)) for param in params]),
        body=cst.IndentedBlock(body),
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
    )


def _no_sites(what: str) -> Mutated:
    return Mutated(not_applicable=f"no statement that can move into {what}")


def same_file_helper(program: Program, focus: Sequence[int]) -> Mutated:
    sites = _extractable(program, foreign=False)
    if not sites:
        return _no_sites("a helper")
    variants = []
    for site in _by_focus(program, sites, focus, key=lambda site: site.line):
        name = _fresh(program, "helper")
        helper = _helper_def(name, site.params, site.body)
        top = program.top_level_statement(site.line)
        code = _rewrite(program, {site.line: _call_line(site, cst.Name(name), site.params)}, before={top: [helper]})
        variants.append(_single({"example.py": code}))
    return Mutated(variants)


def other_module_helper(program: Program, focus: Sequence[int], project: ExampleProject | None = None) -> Mutated:
    project = project or ExampleProject()
    sites = _extractable(program, foreign=True)
    if not sites:
        return _no_sites("a helper")
    imports = program.module_imports()
    main_path, helpers_path, relative = project.helper_layout()
    helpers_module = cst.Name(Path(helpers_path).stem)
    variants = []
    for site in _by_focus(program, sites, focus, key=lambda site: site.line):
        name = _fresh(program, "helper")
        helpers = cst.Module(body=[*imports, _helper_def(name, site.params, site.body)])
        importing = cst.SimpleStatementLine([cst.ImportFrom(
            module=helpers_module, relative=[cst.Dot()] if relative else [], names=[cst.ImportAlias(cst.Name(name))]
        )])
        anchor = imports[-1] if imports else None
        replacements = {site.line: _call_line(site, cst.Name(name), site.params)}
        if anchor is not None:
            main = _rewrite(program, replacements, after={anchor: [importing]})
        else:
            main = cst.Module(body=[importing]).code + _rewrite(program, replacements)
        files = {**project.others(), helpers_path: helpers.code, main_path: main}
        if not project.files and project.path == ExampleProject.path:
            files["pkg/__init__.py"] = ""  # a lone example becomes a two-file package
        variants.append(_single(files))
    return Mutated(variants)


def method(program: Program, focus: Sequence[int]) -> Mutated:
    sites = _extractable(program, foreign=False)
    if not sites:
        return _no_sites("a method")
    variants = []
    for site in _by_focus(program, sites, focus, key=lambda site: site.line):
        name = _fresh(program, "helper")
        function = program.enclosing_function(site.line)
        owner = program.enclosing_class(function) if function is not None else None
        receiver = None
        if owner is not None and function.params.params and not function.decorators:
            receiver = function.params.params[0].name.value
        if receiver is not None and receiver in site.params:
            # a method of the same class: `self.helper_1(...)`
            others = [param for param in site.params if param != receiver]
            helper = _helper_def(name, [receiver, *others], site.body).with_changes(
                leading_lines=[cst.EmptyLine()]
            )
            call = _call_line(site, cst.Attribute(cst.Name(receiver), cst.Name(name)), others)
            code = _rewrite(program, {
                site.line: call,
                owner.body: lambda updated, helper=helper: updated.with_changes(body=[*updated.body, helper]),
            })
        else:
            # a method of a new class: `Helper_1().run(...)`
            class_name = _fresh(program, "Steps")
            receiver_name = _fresh(program, "this")
            helper = _helper_def("run", [receiver_name, *site.params], site.body).with_changes(leading_lines=[])
            holder = cst.ClassDef(name=cst.Name(class_name), body=cst.IndentedBlock([helper]),
                                  leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            func = cst.Attribute(cst.Call(cst.Name(class_name)), cst.Name("run"))
            top = program.top_level_statement(site.line)
            code = _rewrite(program, {site.line: _call_line(site, func, site.params)}, before={top: [holder]})
        variants.append(_single({"example.py": code}))
    return Mutated(variants)


# ---------------------------------------------------------------------------------------------------
# An object the function constructs, handed in by its callers instead


def _constructor(call: cst.CSTNode) -> bool:
    if not isinstance(call, cst.Call):
        return False
    name = _callee_name(call)
    return bool(name) and name[0].isupper()


def passed_in(program: Program, focus: Sequence[int]) -> Mutated:
    sites = []
    for function in _nodes(program.module, cst.FunctionDef):
        if not isinstance(function.body, cst.IndentedBlock):
            continue
        owner = program.enclosing_class(function)
        receiver = function.params.params[0].name.value if owner is not None and function.params.params else None
        seen: set[str] = set()
        for line in function.body.body:
            assign = _assignment(line)
            if assign is not None and _constructor(assign.value) and not _free_names(program, assign.value, False):
                target = assign.targets[0].target
                if isinstance(target, cst.Name) and target.value not in seen:
                    sites.append((function, owner, line, assign, target.value, None))
                elif m.matches(target, m.Attribute(value=m.Name(receiver or "\0"), attr=m.Name())):
                    sites.append((function, owner, line, assign, target.attr.value, target))
            seen |= _names_read(line)
    if not sites:
        return Mutated(not_applicable="no object constructed from globals inside a function")
    variants = []
    for function, owner, line, assign, name, attribute in _by_focus(program, sites, focus, key=lambda site: site[2]):
        if attribute is None and any(
            m.findall(function, m.Global(names=[m.ZeroOrMore(), m.NameItem(m.Name(name)), m.ZeroOrMore()]))
        ):
            continue
        param = name if attribute is None and name not in _param_names(function) else _fresh(program, name)
        if attribute is None and param == name:
            replacement: object = cst.RemoveFromParent()
        else:
            target = attribute if attribute is not None else cst.Name(name)
            replacement = line.with_changes(body=[cst.Assign([cst.AssignTarget(target)], cst.Name(param))])
        params = function.params
        kwonly = [*params.kwonly_params, cst.Param(cst.Name(param))]
        star = params.star_arg if not isinstance(params.star_arg, cst.MaybeSentinel) else cst.ParamStar()
        new_function = function.with_changes(params=params.with_changes(kwonly_params=kwonly, star_arg=star))
        argument = cst.Arg(assign.value, keyword=cst.Name(param))
        callers = set()
        for call in _nodes(program.module, cst.Call):
            callee = call.func
            if function.name.value == "__init__" and owner is not None:
                hit = m.matches(callee, m.Name(owner.name.value))
            elif owner is not None:
                hit = m.matches(callee, m.Attribute(attr=m.Name(function.name.value)))
            else:
                hit = m.matches(callee, m.Name(function.name.value))
            if hit:
                callers.add(call)
        # the function node is an ancestor of the removed line: rewrite the line first, then its params
        code = program.module.visit(_PassIn(line, replacement, function, new_function.params, callers, argument)).code
        variants.append(_single({"example.py": code}))
    if not variants:
        return Mutated(not_applicable="the constructed object is declared global")
    return Mutated(variants)


def _param_names(function: cst.FunctionDef) -> set[str]:
    return {param.name.value for param in _nodes(function.params, cst.Param)}


class _PassIn(cst.CSTTransformer):
    def __init__(self, line, replacement, function, params, callers, argument) -> None:
        super().__init__()
        self.line, self.replacement, self.function, self.params = line, replacement, function, params
        self.callers, self.argument = callers, argument

    def leave_SimpleStatementLine(self, original, updated):
        return self.replacement if original is self.line else updated

    def leave_FunctionDef(self, original, updated):
        if original is not self.function:
            return updated
        if not updated.body.body:
            updated = updated.with_changes(body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])]))
        return updated.with_changes(params=self.params)

    def leave_Call(self, original, updated):
        if original in self.callers:
            return updated.with_changes(args=[*updated.args, self.argument])
        return updated


# ---------------------------------------------------------------------------------------------------
# A function's body as a module-level script


def module_script(program: Program, focus: Sequence[int]) -> Mutated:
    module_names = {name for statement in program.module.body if not isinstance(statement, cst.FunctionDef)
                    for name in _names_read(statement)}
    variants = []
    reasons = []
    for function in program.module.body:
        if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
            continue
        why = _why_not_a_script(program, function, module_names)
        if why:
            reasons.append(why)
            continue
        statements: list[cst.BaseStatement] = []
        for param in function.params.params:
            if param.default is not None:
                statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(param.name)], param.default)]))
        body = list(function.body.body)
        last = body[-1]
        if m.matches(last, m.SimpleStatementLine(body=[m.Return()])):
            body[-1] = last.with_changes(body=[cst.Pass()])
        statements.extend(body)
        statements[0] = statements[0].with_changes(leading_lines=function.leading_lines)
        code = _rewrite(program, {function: cst.FlattenSentinel(statements)})
        variants.append(_single({"example.py": code}))
    if not variants:
        return Mutated(not_applicable=reasons[0] if reasons else "no top-level function")
    return Mutated(_by_focus_variants(variants))


def _by_focus_variants(variants: list[Variant]) -> list[Variant]:
    return variants[:MAX_SITES]  # one per top-level function, in source order


def _why_not_a_script(program: Program, function: cst.FunctionDef, module_names: set[str]) -> str | None:
    if function.decorators or function.asynchronous:
        return "a decorated or async function"
    if function.name.value.startswith("test"):
        return "a test function (pytest runs it by its name)"
    params = function.params
    if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg or params.kwonly_params:
        return "a function with *args, **kwargs or keyword-only parameters"
    others = [name for name in m.findall(program.module, m.Name(function.name.value))
              if program.parents.get(name) is not function]
    if others:
        return "a function that the file calls or refers to"
    if m.findall(function.body, m.OneOf(m.Global(), m.Nonlocal(), m.Yield())):
        return "a function with global, nonlocal or yield"
    own_returns = [node for node in _nodes(function.body, cst.Return)
                   if program.enclosing_function(node) is function]
    last = function.body.body[-1]
    if any(node is not (last.body[0] if isinstance(last, cst.SimpleStatementLine) else None) for node in own_returns):
        return "a function that returns early"
    if any(node.value is not None for node in own_returns):
        return "a function that returns a value (a script has nowhere to hand it)"
    scope = program.scopes.get(function.body.body[0])
    local_names = set(scope.assignments._assignments) if scope is not None else set()
    clash = local_names & (module_names | {n.name.value for n in program.module.body if isinstance(n, (cst.FunctionDef, cst.ClassDef))})
    other_reads = {name for other in program.module.body if other is not function for name in _names_read(other)}
    if clash or local_names & other_reads:
        return "a function whose local names the module also uses"
    return None


# ---------------------------------------------------------------------------------------------------
# Neutral names


NEUTRAL = [chr(code) for code in range(ord("a"), ord("z") + 1)]


def receiver_renamed(program: Program, focus: Sequence[int]) -> Mutated:
    return neutral_names(program, focus, only={"self", "cls"})


def neutral_names(program: Program, focus: Sequence[int], only: set[str] | None = None) -> Mutated:
    excluded: set[str] = set(dir(builtins))
    renamed: dict[str, tuple[int, int]] = {}
    params_with_keywords = set()
    keywords = {arg.keyword.value for arg in (a for a in _nodes(program.module, cst.Arg) if a.keyword is not None)}
    for scope in set(program.scopes.values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            node = assignment.node
            if isinstance(assignment, (ImportAssignment, BuiltinAssignment)) or isinstance(
                node, (cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom)
            ):
                excluded.add(assignment.name)
            elif isinstance(node, cst.Param):
                if node.default is not None or node.star not in ("", cst.MaybeSentinel.DEFAULT) or node.name.value in keywords:
                    params_with_keywords.add(assignment.name)
                _note_first(renamed, assignment.name, _first_line(program, node))
            elif isinstance(node, cst.Name):
                _note_first(renamed, assignment.name, _first_line(program, node))
            else:
                excluded.add(assignment.name)  # a class attribute, a `global` name...
    for parameters in _nodes(program.module, cst.Parameters):
        for param in parameters.kwonly_params:
            params_with_keywords.add(param.name.value)
    variables = sorted((set(renamed) - excluded - params_with_keywords), key=lambda name: (renamed[name], name))
    attributes = _own_attributes(program) - excluded
    if only is not None:
        variables = [name for name in variables if name in only]
        attributes = set()
    used = program.identifiers | {attribute.attr.value for attribute in _nodes(program.module, cst.Attribute)} | keywords
    pool = iter(name for name in NEUTRAL + [f"{letter}{index}" for index in range(1, 9) for letter in NEUTRAL]
                if name not in used and not keyword.iskeyword(name))
    mapping = {name: next(pool) for name in variables}
    attribute_mapping = {name: next(pool) for name in sorted(attributes)}
    if not mapping and not attribute_mapping:
        return Mutated(not_applicable="no variable of the file's own")
    code = program.module.visit(_Rename(program, mapping, attribute_mapping)).code
    return Mutated([_single({"example.py": code})])


def _note_first(renamed: dict[str, tuple[int, int]], name: str, where: tuple[int, int]) -> None:
    """Keep a name's earliest binding: scopes are visited in no fixed order (a set of scope objects), and
    the name's first line decides the order names are given neutral spellings."""
    renamed[name] = min(renamed.get(name, where), where)


def _first_line(program: Program, node: cst.CSTNode) -> tuple[int, int]:
    if node not in program.positions:
        return (0, 0)
    start = program.positions[node].start
    return (start.line, start.column)


def _own_attributes(program: Program) -> set[str]:
    """Attributes the file assigns on a method's first parameter (`self.loss_fn = ...`)."""
    found = set()
    for function in _nodes(program.module, cst.FunctionDef):
        owner = program.enclosing_class(function)
        if owner is None or not function.params.params:
            continue
        receiver = function.params.params[0].name.value
        for target in m.findall(function, m.AssignTarget(target=m.Attribute(value=m.Name(receiver)))):
            attr = target.target.attr.value
            if not attr.startswith("__") and attr not in RESERVED_ATTRIBUTES:
                found.add(attr)
    return found


class _Rename(cst.CSTTransformer):
    def __init__(self, program: Program, mapping: dict[str, str], attributes: dict[str, str]) -> None:
        super().__init__()
        self.program, self.mapping, self.attributes = program, mapping, attributes
        self.variable_names = set()
        for scope in set(program.scopes.values()):
            if scope is None:
                continue
            for assignment in scope.assignments:
                if isinstance(assignment.node, cst.Name):
                    self.variable_names.add(assignment.node)
            for access in scope.accesses:
                if isinstance(access.node, cst.Name):
                    self.variable_names.add(access.node)

    def leave_Name(self, original, updated):
        if original in self.variable_names and original.value in self.mapping:
            return updated.with_changes(value=self.mapping[original.value])
        return updated

    def leave_Param(self, original, updated):
        if original.name.value in self.mapping:
            return updated.with_changes(name=cst.Name(self.mapping[original.name.value]))
        return updated

    def leave_NameItem(self, original, updated):
        if original.name.value in self.mapping:
            return updated.with_changes(name=cst.Name(self.mapping[original.name.value]))
        return updated

    def leave_Attribute(self, original, updated):
        if original.attr.value in self.attributes:
            return updated.with_changes(attr=cst.Name(self.attributes[original.attr.value]))
        return updated


# ---------------------------------------------------------------------------------------------------
# Running the matrix


GENERATORS = {
    "device_move": device_move,
    "cast": cast,
    "tuple_assignment": tuple_assignment,
    "same_file_helper": same_file_helper,
    "other_module_helper": other_module_helper,
    "method": method,
    "passed_in": passed_in,
    "module_script": module_script,
    "neutral_names": neutral_names,
    "receiver_renamed": receiver_renamed,
}


def mutate(kind: str, code: str, source: str, focus: Sequence[int] = (), program: Program | None = None,
           project: ExampleProject | None = None) -> Mutated:
    """Every variant of one example under one mutation; each variant compiles. `program` is the
    parsed source, when the caller already has it (the rewrites never change it); `project` where the
    example lives and the other files of its project, which every variant carries."""
    reason = NOT_APPLICABLE_TO.get(kind, {}).get(code)
    if reason:
        return Mutated(not_applicable=reason)
    project = project or ExampleProject()
    program = program or Program(source)
    if kind == "other_module_helper":
        mutated = other_module_helper(program, focus, project)
    else:
        mutated = GENERATORS[kind](program, focus)
        # a rewrite that produces the original program again is no mutation
        mutated.variants = [project.place(variant) for variant in mutated.variants
                            if not (len(variant.files) == 1 and variant.files[0][1] == source)]
    for variant in mutated.variants:
        for path, text in variant.files:
            compile(text, path, "exec")
    if not mutated.variants and mutated.not_applicable is None:
        mutated.not_applicable = "the rewrite changes nothing"
    return mutated


@dataclass
class Cell:
    """One example under one mutation: not applicable, or whether every variant fired / any fired."""

    rule: str
    kind: str  # "bad" / "near_misses"
    name: str
    mutation: str
    not_applicable: str | None = None
    fired: list[bool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.rule} | {self.kind} | {self.name} | {self.mutation}"

    @property
    def kept(self) -> bool:  # a bad example still reported under every variant
        return bool(self.fired) and all(self.fired)

    @property
    def alarm(self) -> bool:  # a near miss reported under some variant
        return any(self.fired)


def _selection(code: str, source: str, catalog) -> tuple[str, ...]:
    """As tests/test_rule_examples.py: a rule runs alone, the meta rule with the rules its example names."""
    from stabfix.checkers import checker_classes

    if not checker_classes()[code].meta:
        return (code,)
    named = {other for other, spec in catalog.items() if other in source or spec.name in source}
    return tuple(sorted({*named, code}))


def _scan(root: Path, selection: tuple[str, ...]) -> dict:
    from typer.testing import CliRunner

    from stabfix.cli import app

    (root / "stabfix.yaml").write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(app, [
        "scan", str(root), "--output-format", "json", "--no-cache", "--jobs", "1",
        "--select", ",".join(selection), "--config", str(root / "stabfix.yaml"),
    ])
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"stabfix scan exited {result.exit_code}: {result.output[-2000:]}")
    return json.loads(result.stdout)


def _focus_lines(code: str, example, catalog) -> list[int]:
    """The lines the rule reports on the example, seen with the other files of its project."""
    from stabfix.checkers import checker_classes
    from stabfix.engine import analyse_text
    from stabfix.project import Project, ProjectIndex

    classes = [checker_classes()[other] for other in _selection(code, example.code, catalog)]
    view = Project(ProjectIndex.from_sources(example.project_sources())).view(f"/stabfix-sources/{example.path}")
    analysis = analyse_text(example.code, example.path, classes, catalog, project=view)
    return sorted({item.finding.line for item in analysis.findings if item.finding.code == code})


def rule_cells(code: str, mutations: Sequence[str] = MUTATIONS, catalog=None) -> list[Cell]:
    """Every cell of one rule: each bad example and near miss under each mutation, scanned by the CLI."""
    catalog = catalog or load_catalog()
    spec = catalog[code]
    cells: list[Cell] = []
    jobs: dict[tuple[str, ...], list[tuple[Cell, str]]] = {}
    with tempfile.TemporaryDirectory(prefix=f"stabfix-mutations-{code}-") as tmp:
        root = Path(tmp)
        for kind in ("bad", "near_misses"):
            for index, example in enumerate(getattr(spec, kind)):
                focus = _focus_lines(code, example, catalog) if kind == "bad" else []
                selection = _selection(code, example.code, catalog)
                program = Program(example.code)
                project = ExampleProject(example.path, example.files)
                for mutation in mutations:
                    cell = Cell(code, kind, example.name, mutation)
                    cells.append(cell)
                    mutated = mutate(mutation, code, example.code, focus, program, project)
                    if mutated.not_applicable:
                        cell.not_applicable = mutated.not_applicable
                        continue
                    for number, variant in enumerate(mutated.variants):
                        folder = f"g{len(jobs.get(selection, ())):05d}_{kind}_{index}_{mutation}_{number}"
                        base = root / "-".join(selection) / folder
                        for path, text in variant.files:
                            (base / path).parent.mkdir(parents=True, exist_ok=True)
                            (base / path).write_text(text, encoding="utf-8")
                        jobs.setdefault(selection, []).append((cell, folder))
        for selection, variants in jobs.items():
            scanned = root / "-".join(selection)
            report = _scan(scanned, selection)
            fired = {_variant_folder(f["path"], scanned) for f in report["findings"] if f["code"] == code}
            failed = {_variant_folder(e["path"], scanned): e["message"] for e in report["errors"]}
            for cell, folder in variants:
                cell.fired.append(_folder_of(folder, fired))
                if _folder_of(folder, failed):
                    cell.errors.append(next(msg for path, msg in failed.items() if path == folder))
    return cells


def _folder_of(folder: str, paths) -> bool:
    return folder in paths


def _variant_folder(path: str, scanned: Path) -> str:
    """The variant a reported path belongs to (the CLI shows paths relative to the working directory)."""
    return Path(path).resolve().relative_to(scanned.resolve()).parts[0]


def summary(cells: list[Cell]) -> dict:
    """Per rule and mutation: bad examples kept / applicable, near misses alarmed / applicable."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for cell in cells:
        entry = table.setdefault(cell.rule, {}).setdefault(
            cell.mutation, {"kept": 0, "bad": 0, "alarms": 0, "near_misses": 0})
        if cell.not_applicable:
            continue
        if cell.kind == "bad":
            entry["bad"] += 1
            entry["kept"] += cell.kept
        else:
            entry["near_misses"] += 1
            entry["alarms"] += cell.alarm
    return table


def markdown(cells: list[Cell], mutations: Sequence[str] = MUTATIONS) -> str:
    table = summary(cells)
    short = {name: name.replace("_", " ") for name in mutations}
    lines = ["Bad examples kept (still reported under every variant) / examples the mutation applies to:", ""]
    lines.append("| rule | " + " | ".join(short[name] for name in mutations) + " |")
    lines.append("| --- |" + " ---: |" * len(mutations))
    totals = {name: [0, 0, 0, 0] for name in mutations}
    for rule in sorted(table):
        row = []
        for name in mutations:
            entry = table[rule].get(name, {"kept": 0, "bad": 0, "alarms": 0, "near_misses": 0})
            totals[name][0] += entry["kept"]
            totals[name][1] += entry["bad"]
            totals[name][2] += entry["alarms"]
            totals[name][3] += entry["near_misses"]
            row.append(f"{entry['kept']}/{entry['bad']}" if entry["bad"] else "n/a")
        lines.append(f"| {rule} | " + " | ".join(row) + " |")
    lines.append("| **total** | " + " | ".join(f"**{t[0]}/{t[1]}**" for t in totals.values()) + " |")
    lines += ["", "Near misses that raise a false alarm (reported under some variant) / near misses the mutation applies to:", ""]
    lines.append("| rule | " + " | ".join(short[name] for name in mutations) + " |")
    lines.append("| --- |" + " ---: |" * len(mutations))
    for rule in sorted(table):
        row = []
        for name in mutations:
            entry = table[rule].get(name, {"alarms": 0, "near_misses": 0})
            row.append(f"{entry['alarms']}/{entry['near_misses']}" if entry["near_misses"] else "n/a")
        lines.append(f"| {rule} | " + " | ".join(row) + " |")
    lines.append("| **total** | " + " | ".join(f"**{t[2]}/{t[3]}**" for t in totals.values()) + " |")
    errors = [cell for cell in cells if cell.errors]
    if errors:
        lines += ["", "Variants the scan reported an error on:", ""]
        lines += [f"- {cell.key}: {cell.errors[0]}" for cell in errors]
    return "\n".join(lines) + "\n"


def baseline_of(cells: list[Cell]) -> dict:
    """The ratchet: per rule and mutation, how many bad examples stay reported; and the near misses
    that already raise a false alarm under a mutation (known, to be fixed; a new one fails)."""
    table = summary(cells)
    return {
        rule: {
            "kept": {name: entry["kept"] for name, entry in sorted(table[rule].items())},
            "known_false_alarms": sorted(
                f"{cell.kind} | {cell.name} | {cell.mutation}"
                for cell in cells if cell.rule == rule and cell.kind == "near_misses" and cell.alarm
            ),
        }
        for rule in sorted(table)
    }


def blame_names(rules: Sequence[str], catalog) -> Iterator[str]:
    """For every example whose answer the neutral-names mutation changes, the single renames that change
    it: the names a rule still decides on (docs/model.md, "Where a name still decides")."""
    from stabfix.checkers import checker_classes
    from stabfix.engine import analyse_text

    def fires(code: str, text: str) -> bool:
        classes = [checker_classes()[other] for other in _selection(code, text, catalog)]
        return any(item.finding.code == code for item in analyse_text(text, "example.py", classes, catalog).findings)

    for code in rules:
        for kind in ("bad", "near_misses"):
            for example in getattr(catalog[code], kind):
                program = Program(example.code)
                mutated = neutral_names(program, [])
                if not mutated.variants:
                    continue
                renamed = dict(mutated.variants[0].files)["example.py"]
                before = fires(code, example.code)
                if fires(code, renamed) == before:
                    continue
                left = {node.value for node in _nodes(cst.parse_module(renamed), cst.Name)}
                variables = sorted(program.identifiers - left)
                culprits = [name for name in variables
                            if fires(code, program.module.visit(_Rename(program, {name: "zz_renamed"}, {})).code) != before]
                culprits += [f"self.{name}" for name in sorted(_own_attributes(program))
                             if fires(code, program.module.visit(_Rename(program, {}, {name: "zz_renamed"})).code) != before]
                what = "lost" if kind == "bad" else "false alarm"
                yield f"{code} | {what} | {example.name} | {', '.join(culprits) or '(only several renames together)'}"


def show_variants(code: str, wanted: str, catalog) -> Iterator[str]:
    """Every variant of the examples of one rule whose key (`kind | name | mutation`) contains
    `wanted`, file by file, as the scan sees them."""
    spec = catalog[code]
    for kind in ("bad", "near_misses"):
        for example in getattr(spec, kind):
            focus = _focus_lines(code, example, catalog) if kind == "bad" else []
            for mutation in MUTATIONS:
                key = f"{kind} | {example.name} | {mutation}"
                if wanted not in key:
                    continue
                mutated = mutate(mutation, code, example.code, focus, project=ExampleProject(example.path, example.files))
                if mutated.not_applicable:
                    yield f"### {key}: not applicable ({mutated.not_applicable})"
                for number, variant in enumerate(mutated.variants):
                    for path, text in variant.files:
                        yield f"### {key} | variant {number} | {path}\n{text}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", action="store_true", help="print the matrix as markdown")
    parser.add_argument("--update-baseline", action="store_true", help=f"rewrite {BASELINE.name}")
    parser.add_argument("--rule", action="append", help="only these rules (repeatable)")
    parser.add_argument("--details", action="store_true", help="list every lost example and false alarm")
    parser.add_argument("--blame-names", action="store_true",
                        help="for each example the neutral names change, the single renames that change it")
    parser.add_argument("--show", metavar="KEY",
                        help="print the variants of the --rule's examples whose `kind | name | mutation` contains KEY")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    rules = args.rule or sorted(catalog)
    if args.show:
        for code in rules:
            for text in show_variants(code, args.show, catalog):
                print(text)
        return 0
    if args.blame_names:
        for line in blame_names(rules, catalog):
            print(line)
        return 0
    cells = [cell for code in rules for cell in rule_cells(code, MUTATIONS, catalog)]
    if args.table or not (args.update_baseline or args.details):
        sys.stdout.write(markdown(cells))
    if args.details:
        for cell in cells:
            if cell.not_applicable:
                continue
            if cell.kind == "bad" and not cell.kept:
                print(f"lost: {cell.key} ({sum(cell.fired)}/{len(cell.fired)} variants)")
            if cell.kind == "near_misses" and cell.alarm:
                print(f"false alarm: {cell.key} ({sum(cell.fired)}/{len(cell.fired)} variants)")
    if args.update_baseline:
        current = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
        current.update(baseline_of(cells))
        BASELINE.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {BASELINE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
