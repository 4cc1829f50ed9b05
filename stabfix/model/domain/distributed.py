"""Distributed training: is this a multi-process script, which code only rank 0 runs, which loaders shard.

Queried after the traversal (built on `names` and `flows`):

- `evidence()`: the first sign that the file runs as one of several processes: a process group
  (`init_process_group`), a DDP/FSDP/DeepSpeed wrap, an accelerate `Accelerator`, a Fabric, a torchrun
  environment read (`os.environ["LOCAL_RANK"]`, `os.getenv("RANK")`), `mp.spawn`; None for a plain script.
- `rank_zero_test(expr)`: True when a test holds on global rank 0 only (`rank == 0`, `dist.get_rank() == 0`,
  `accelerator.is_main_process`, `trainer.is_global_zero`, `not rank`, a same-file helper returning such a
  test, a name bound to one), False when it holds on the other ranks only (`rank != 0`), None otherwise.
  A helper of another file (`from utils import is_main_process`) is judged by its name: the only tie a name breaks.
- `rank_guarded(node)`: whether only rank 0 runs `node`: under a rank-0 test, after an early `return` of the
  other ranks, in a function decorated `@rank_zero_only` / `@accelerator.on_main_process`, or in a same-file
  function that every caller calls under a guard.
- `varies_by_rank(test)`: whether a test can differ between processes (a rank-0 test either way, `local_rank in
  [-1, 0]`, any test reading the rank; not the world size).
- `wrapped(expr)`: whether an expression holds a DDP/DataParallel-wrapped module (`state_dict()` keys prefixed
  `module.`): "always", "prepared" (a module handed back by accelerate's `accelerator.prepare`, DDP-wrapped
  when several processes run), "sometimes" (a conditional wrap, or a mix) or None; FSDP is not a prefixing wrap.
- `runs_distributed(node)`: the code is part of the run the file sets up (module level, the function or class
  that sets it up, or a same-file function they call), not a helper of a utility module that reads `RANK`.
- `mentions_rank(expr)`: whether an expression depends on the process's rank (a per-rank file path).
- `pipeline`: the loaders the file builds (`DataLoader(...)` with its holder, dataset, sampler, shuffle), what
  kind of sampler an expression is (distributed, a single-process torch one, unknown), the loops drawing from a loader,
  where a loader is held through the same-file functions returning it (`holders`, `returned_by`).
- `sets_epoch(call)`: the call runs a function, of this file or another scanned one, that calls `set_epoch`.
- `handled_loaders()`: the loaders a framework shards (passed to `accelerator.prepare`, even in a tuple,
  `fabric.setup_dataloaders`), and `framework_shards()`: a Lightning `Trainer` or HF `Trainer` runs the loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import code_of
from stabfix.model.source.traversal import children

GROUP_SETUP = frozenset({
    "torch.distributed.init_process_group", "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.init_device_mesh", "torch.multiprocessing.spawn", "deepspeed.initialize",
    "deepspeed.init_distributed", "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric",
})
WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel", "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
})
PREFIXING_WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
})
# Methods only a module has (not an optimizer, scheduler or loader: `state_dict` is shared, left out).
_MODULE_ONLY_METHODS = frozenset({"parameters", "named_parameters", "train", "eval", "modules", "named_modules",
                                  "children", "forward", "generate", "buffers"})
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "bfloat16", "double", "requires_grad_"})
RANK_CALLS = frozenset({"torch.distributed.get_rank", "torch.distributed.get_node_local_rank"})
RANK_ENV = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_PROCID"})
PER_PROCESS_ENV = frozenset({"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID"})
RANK_ATTRIBUTES = frozenset({"process_index", "local_process_index", "global_rank", "local_rank", "rank", "node_rank"})
MAIN_ATTRIBUTES = frozenset({"is_main_process", "is_local_main_process", "is_global_zero", "is_world_process_zero",
                             "is_local_process_zero", "is_main"})
MAIN_DECORATORS = frozenset({"rank_zero_only", "on_main_process", "on_local_main_process"})
SHARDING_TRAINERS = frozenset({"lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer",
                               "transformers.Trainer", "transformers.Seq2SeqTrainer", "trl.SFTTrainer"})
RANK_FREE = frozenset({"torch.distributed.get_world_size"})
_MAIN_WORD = re.compile(r"(main|master|rank_?0|rank_?zero|global_zero|chief)", re.IGNORECASE)


class Distributed:
    def __init__(self, imports: ImportTracker, names: Names, flows: ValueFlows, project=None) -> None:
        self.imports = imports
        self.project = project  # the other files of the scan (`ProjectQueries`), or None
        self.names = names
        self.flows = flows
        self._evidence: Optional[tuple[Optional[cst.CSTNode]]] = None
        self.pipeline = DataPipeline(self)
        self._setups: Optional[list[cst.CSTNode]] = None  # every node that sets the run up
        self._varies: dict[int, bool] = {}  # id(test) -> varies_by_rank(test): asked once per call under the test

    # --- the script --------------------------------------------------------------------------------
    def evidence(self) -> Optional[cst.CSTNode]:
        if self._evidence is None:
            found = next((call for call in self.flows.calls() if self._sets_up(call)), None)
            stack: list[cst.CSTNode] = [self.flows.module] if found is None and self.flows.module is not None else []
            while stack and found is None:  # `int(os.environ["LOCAL_RANK"])`: launched by torchrun
                node = stack.pop()
                found = node if self.environment_rank_read(node) else None
                stack.extend(children(node))
            self._evidence = (found,)
        return self._evidence[0]

    def _sets_up(self, call: cst.Call) -> bool:
        qualified = self.names.qualify(call.func) or ""
        if qualified in GROUP_SETUP or qualified in WRAPPERS:
            return True
        if qualified in ("os.getenv", "os.environ.get") and call.args:
            return _env_name(call.args[0].value) in RANK_ENV
        return False

    def environment_rank_read(self, node: cst.CSTNode, sizes: bool = True) -> bool:
        """`os.environ["LOCAL_RANK"]` (with `sizes`, `os.environ["WORLD_SIZE"]` too)."""
        return isinstance(node, cst.Subscript) and self.names.qualify(node.value) == "os.environ" \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and _env_name(node.slice[0].slice.value) in (RANK_ENV if sizes else PER_PROCESS_ENV)

    def runs_distributed(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """Whether the code at `node` is part of the distributed run the file shows: at module level, in the function
        or class that sets it up, or in a same-file function called from such code (a utility module that only reads
        `RANK` does not make each of its helpers run on every rank)."""
        if self.evidence() is None:
            return False
        function = self.flows.enclosing_function(node)
        if function is None:
            return True
        if self._setups is None:
            self._setups = [call for call in self.flows.calls() if self._sets_up(call)] + \
                ([self.evidence()] if not isinstance(self.evidence(), cst.Call) else [])
        owner = self.flows.parent(self.flows.parent(function))
        scope = owner if isinstance(owner, cst.ClassDef) else function
        if any(_contains(scope, setup) for setup in self._setups):
            return True
        if depth >= 2:
            return False
        return any(self.runs_distributed(call, depth + 1) for call in self.flows.calls()
                   if self.names.definition_of(call) is function)

    def framework_shards(self) -> bool:
        """A Lightning or HF trainer runs the loop: it gives each rank its own shard itself."""
        return any(self.names.qualify(call.func) in SHARDING_TRAINERS for call in self.flows.calls())

    def handled_loaders(self) -> set[str]:
        """The source text of every expression handed to `accelerator.prepare(...)`/`fabric.setup_dataloaders(...)`
        (each element of a tuple too): those loaders get a distributed sampler from the framework."""
        handled: set[str] = set()
        for call in self.flows.calls():
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("prepare", "prepare_data_loader", "setup_dataloaders") \
                    and self._framework_object(func.value):
                for arg in call.args:
                    values = arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg]
                    handled.update(code_of(v.value, 200) for v in values)
            handled.update(self._rewrapped(call))
        return handled

    def _rewrapped(self, call: cst.Call) -> set[str]:
        """`model, opt, loader = engine.make_private(..., data_loader=loader)`: a library call takes the loader and
        hands back its own in its place (opacus, DeepSpeed, a framework's setup): the original is no longer drawn."""
        parent = self.flows.parent(call)
        if not isinstance(parent, cst.Assign) or (self.names.qualify(call.func) or "").startswith("torch."):
            return set()
        targets = set()
        for target in parent.targets:
            elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else None
            targets.update(code_of(e.value, 200) for e in elements) if elements else targets.add(code_of(target.target, 200))
        return {code_of(arg.value, 200) for arg in call.args} & targets

    def framework_object(self, receiver: cst.BaseExpression) -> bool:
        """`receiver` is an accelerate `Accelerator` or a Fabric the file builds (or, in a distributed file, a
        parameter or `self.<attr>` that holds one)."""
        return self._framework_object(receiver)

    def _framework_object(self, receiver: cst.BaseExpression) -> bool:
        if isinstance(receiver, cst.Name):
            for binding in self.names.bindings_of(receiver) if receiver in self.names.uses else []:
                value = binding.bound_value
                if isinstance(value, cst.Call) and self.names.qualify(value.func) in GROUP_SETUP:
                    return True
            return self.names.qualify(receiver) is None and bool(self.evidence())  # a parameter: the script's own
        return isinstance(receiver, cst.Attribute)  # self.accelerator, self.fabric

    # --- wrapped modules ---------------------------------------------------------------------------
    def wrapped(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """Whether `expr` holds a module wrapped by DDP or DataParallel, whose `state_dict()` keys carry a
        `module.` prefix: "always" (every binding reaching it is a wrap), "prepared" (every binding is a
        module handed back by accelerate's `accelerator.prepare(...)`, DDP-wrapped whenever the run has
        several processes), "sometimes" (`if distributed: model = DDP(model)`, or a mix), None (not shown).
        Followed through names, `self.<attr>` and the returns of same-file helpers. FSDP and `fully_shard`
        are not prefixing wraps: their state-dict hooks give the inner module's names."""
        bindings = self._reaching_bindings(expr)
        if not bindings or depth > 3:
            return None
        kinds = ["always" if self._is_wrap(b.bound_value, depth) else "prepared" if self._prepared(b, expr) else None
                 for b in bindings]
        if len(set(kinds)) == 1:
            return kinds[0]
        return "sometimes" if any(kinds) else None

    def _prepared(self, binding: Binding, receiver: cst.BaseExpression) -> bool:
        """`model = accelerator.prepare(model)`, `model, opt, loader = accelerator.prepare(model, opt, loader)`:
        the element is what accelerate hands back for a module (its argument, or the name it is bound to,
        is called or has a method only a module has), wrapped in DDP when several processes run."""
        value = binding.value
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) \
                or value.func.attr.value != "prepare" or not self._framework_object(value.func.value):
            return False
        positional = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
        if len(positional) != len(value.args):
            return False
        if binding.kind == "assign" and len(positional) == 1:
            handed = positional[0]
        elif binding.kind == "unpack" and len(binding.position) == 1 and binding.position[0] < len(positional):
            handed = positional[binding.position[0]]
        else:
            return False
        return self._used_as_module(handed) or self._used_as_module(receiver)

    def _used_as_module(self, expr: cst.BaseExpression) -> bool:
        """The code calls `expr` (a forward pass) or a method only a module has (`parameters`, `train`...)."""
        spelled = dotted_name(expr)
        if spelled is None:
            return False
        for call in self.flows.calls():
            func = call.func
            if dotted_name(func) == spelled and self.names.qualify(func) is None:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_ONLY_METHODS and dotted_name(func.value) == spelled:
                return True
        return False

    def _is_wrap(self, value: Optional[cst.BaseExpression], depth: int) -> bool:
        if not isinstance(value, cst.Call):
            return False
        if self.names.qualify(value.func) in PREFIXING_WRAPPERS:
            return True
        func = value.func  # `nn.DataParallel(net).cuda()`: a module's `.to`/`.cuda`/`.train` return the module
        if isinstance(func, cst.Attribute) and func.attr.value in _RETURNS_SELF:
            inner = func.value
            return self._is_wrap(inner, depth + 1) if isinstance(inner, cst.Call) else self.wrapped(inner, depth + 1) == "always"
        definition = self.names.definition_of(value)
        return definition is not None and any(
            self.wrapped(returned, depth + 1) == "always" or self._is_wrap(returned, depth + 1)
            for returned in _returned(definition))

    def _reaching_bindings(self, expr: cst.BaseExpression) -> list[Binding]:
        if isinstance(expr, cst.Name) and expr in self.names.uses:
            return self.names.reaching(expr) or self.names.bindings_of(expr)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
                and expr.value in self.names.uses:
            scope = self.names.scope_of(expr.value)
            owner = self.names.enclosing_class(scope) if scope is not None else None
            return self.names.attribute_reaching(owner, expr.attr.value, expr.value) if owner is not None else []
        return []  # a binding's `bound_value` None: a parameter, a loop target (not shown)

    def sets_epoch(self, call: cst.Call) -> bool:
        """The call runs a function (of this file, or of another scanned file) whose body calls `.set_epoch(...)`."""
        definition = self.names.definition_of(call)
        if definition is not None:
            return _calls_method(definition, "set_epoch")
        qualified = self.names.qualify(call.func)
        if qualified is None or self.project is None:
            return False
        return bool(self.project.foreign(qualified, lambda found: _calls_method(found.node, "set_epoch"),
                                         kinds=("def", "method")))

    # --- ranks -------------------------------------------------------------------------------------
    def mentions_rank(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        """Any part of `expr` is the rank (`f"ckpt_{rank}.pt"`, `os.path.join(d, str(dist.get_rank()))`), also
        through names bound to such an expression (`name = fmt.format(rank=global_rank)`)."""
        stack = [expr]
        while stack:
            node = stack.pop()
            if self._rank_value(node):
                return True
            if isinstance(node, cst.Name) and node in self.names.uses and depth < 2:
                values = [b.bound_value for b in self.names.bindings_of(node) if b.bound_value is not None]
                if any(self.mentions_rank(value, depth + 1) for value in values):
                    return True
            stack.extend(children(node))
        return False

    def varies_by_rank(self, test: cst.BaseExpression) -> bool:
        """Whether a test can come out differently on different processes (`rank == 0`, `local_rank in [-1, 0]`,
        `accelerator.is_main_process`, `not is_main()`); the world size is the same on all of them."""
        known = self._varies.get(id(test))
        if known is None:
            known = self._varies[id(test)] = self._varies_by_rank(test)
        return known

    def _varies_by_rank(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.BooleanOperation):
            return self.varies_by_rank(test.left) or self.varies_by_rank(test.right)
        if self._option_flag(test) or _distributed_mode_test(test):
            return False
        if self.rank_zero_test(test) is not None:
            return True
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            if self._rank_value(node, sizes=False):
                return True
            stack.extend(children(node))
        return False

    def _option_flag(self, test: cst.BaseExpression) -> bool:
        """`if rank0_only:` of a parameter `rank0_only`: an option every rank is given alike, not a test of the
        rank, though its name mentions one (a name word breaking the tie the data flow leaves)."""
        if isinstance(test, cst.UnaryOperation):
            return self._option_flag(test.expression)
        if not isinstance(test, cst.Name) or test not in self.names.uses:
            return False
        bindings = self.names.bindings_of(test)
        return bool(bindings) and all(b.kind == "param" and b.name.endswith("_only") for b in bindings)

    def _rank_value(self, expr: cst.CSTNode, depth: int = 0, sizes: bool = True) -> bool:
        if depth > 6:
            return False
        if isinstance(expr, cst.Call):
            if self.names.qualify(expr.func) in RANK_CALLS:
                return True
            if isinstance(expr.func, cst.Name) and expr.func.value in ("int", "str") and expr.args:
                return self._rank_value(expr.args[0].value, depth + 1, sizes)
            definition = self.names.definition_of(expr)  # `def get_rank(): ... return dist.get_rank()`
            if definition is not None:
                return any(self._rank_value(value, depth + 1, sizes) for value in _returned(definition, nested=True))
            name = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else getattr(expr.func, "value", "")
            qualified = self.names.qualify(expr.func) or ""  # torch's own functions are known: RANK_CALLS read the rank
            if isinstance(name, str) and "rank" in name.lower() and qualified not in RANK_FREE and not qualified.startswith("torch."):
                return True  # another file's `get_local_rank()`: its name breaks the tie
            return self.names.qualify(expr.func) in ("os.getenv", "os.environ.get") and bool(expr.args) \
                and _env_name(expr.args[0].value) in (RANK_ENV if sizes else PER_PROCESS_ENV)
        if self.environment_rank_read(expr, sizes):
            return True
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in RANK_ATTRIBUTES:
                return True
            # `self.gpu_id` that the class set from the rank (`self.gpu_id = int(os.environ["LOCAL_RANK"])`)
            return any(b.bound_value is not None and self._rank_value(b.bound_value, depth + 1, sizes)
                       for b in self.names.self_attribute_bindings(expr))
        if isinstance(expr, cst.Name) and expr in self.names.uses:
            for binding in self.names.bindings_of(expr):
                value = binding.bound_value
                if value is not None and self._rank_value(value, depth + 1, sizes):
                    return True
                if binding.kind == "param" and "rank" in binding.name.lower():  # `def worker(rank, world_size)`
                    return True
                if binding.kind == "import" and binding.name in RANK_ENV:  # `from utils import RANK`
                    return True
        return False

    def rank_zero_test(self, test: cst.BaseExpression, depth: int = 0) -> Optional[bool]:
        if depth > 6:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            if self._rank_value(test.expression):
                return True
            inner = self.rank_zero_test(test.expression, depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            sides = (self.rank_zero_test(test.left, depth + 1), self.rank_zero_test(test.right, depth + 1))
            if isinstance(test.operator, cst.And) and True in sides or isinstance(test.operator, cst.Or) and True in sides \
                    and False not in sides:
                return True
            return False if isinstance(test.operator, cst.Or) and False in sides else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            if isinstance(target.operator, cst.In) and isinstance(target.comparator, (cst.Set, cst.Tuple, cst.List)) \
                    and self._rank_value(test.left):  # `RANK in {-1, 0}`: rank 0, or not distributed at all
                values = [_int_value(element.value) for element in target.comparator.elements]
                return True if 0 in values and all(v is not None and v <= 0 for v in values) else None
            left, right = test.left, target.comparator
            if _is_zero(left):
                left, right = right, left
            if _is_zero(right) and self._rank_value(left):
                if isinstance(target.operator, (cst.Equal, cst.Is, cst.LessThanEqual)):
                    return True
                if isinstance(target.operator, (cst.NotEqual, cst.IsNot, cst.GreaterThan)):
                    return False
            return None
        if isinstance(test, cst.Attribute):
            return True if test.attr.value in MAIN_ATTRIBUTES else None
        if isinstance(test, cst.Call):
            return self._main_call(test, depth)
        if isinstance(test, cst.Name) and test in self.names.uses:
            for binding in self.names.bindings_of(test):
                value = binding.bound_value
                if value is not None and (answer := self.rank_zero_test(value, depth + 1)) is not None:
                    return answer
                if binding.kind == "param" and _MAIN_WORD.search(binding.name):
                    return True
        return None

    def _main_call(self, call: cst.Call, depth: int) -> Optional[bool]:
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in MAIN_ATTRIBUTES:
            return True
        definition = self.names.definition_of(call)
        if definition is not None:
            for returned in _returned(definition):
                if (answer := self.rank_zero_test(returned, depth + 1)) is not None:
                    return answer
            return None
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", "")
        return True if isinstance(name, str) and _MAIN_WORD.search(name) else None  # another file's helper

    def rank_guarded(self, node: cst.CSTNode, depth: int = 0) -> bool:
        child, current = node, self.flows.parent(node)
        while current is not None:
            if isinstance(current, cst.If):
                polarity = self.rank_zero_test(current.test)
                if polarity is True and child is current.body or polarity is False and child is current.orelse:
                    return True
            if isinstance(current, cst.FunctionDef):
                return self._guarded_function(current, child, depth)
            child, current = current, self.flows.parent(current)
        return False

    def _guarded_function(self, function: cst.FunctionDef, statement: cst.CSTNode, depth: int) -> bool:
        for decorator in function.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            name = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", "")
            if name in MAIN_DECORATORS:
                return True
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
        for item in body:  # an early exit of the other ranks before the statement
            if item is statement:
                break
            if isinstance(item, cst.If) and self.rank_zero_test(item.test) is False and _exits(item.body):
                return True
        if depth >= 2:
            return False
        callers = [call for call in self.flows.calls() if self.names.definition_of(call) is function]
        return bool(callers) and all(self.rank_guarded(call, depth + 1) for call in callers)


def _distributed_mode_test(test: cst.BaseExpression) -> bool:
    """`local_rank != -1`, `args.local_rank == -1`: -1 marks a run that is not distributed, the same on every rank."""
    return isinstance(test, cst.Comparison) and all(
        isinstance(c.comparator, cst.UnaryOperation) and isinstance(c.comparator.operator, cst.Minus)
        and isinstance(c.comparator.expression, cst.Integer) and c.comparator.expression.value == "1"
        for c in test.comparisons)


def _calls_method(node: cst.CSTNode, method: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value == method:
            return True
        stack.extend(children(current))
    return False


def _contains(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack = [outer]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(children(current))
    return False


def _int_value(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def _env_name(node: cst.BaseExpression) -> Optional[str]:
    return node.evaluated_value if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str) else None


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0"


def _exits(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    last = statements[-1] if statements else None
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    return False


def _returned(function: cst.FunctionDef, nested: bool = False) -> list[cst.BaseExpression]:
    """The values the function's top-level `return`s give (`nested`: also those inside its branches)."""
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    while stack:
        item = stack.pop()
        if isinstance(item, cst.SimpleStatementLine):
            found.extend(small.value for small in item.body if isinstance(small, cst.Return) and small.value is not None)
        elif nested and not isinstance(item, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(children(item))
    return found


LOADER_CLASSES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DISTRIBUTED_SAMPLERS = frozenset({"torch.utils.data.DistributedSampler",
                                  "torch.utils.data.distributed.DistributedSampler"})
PLAIN_SAMPLERS = frozenset(f"torch.utils.data{module}.{name}" for module in ("", ".sampler")
                           for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler", "SubsetRandomSampler"))


@dataclass(frozen=True)
class Loader:
    """One `DataLoader(...)` construction: where it is held and what it draws with."""

    call: cst.Call
    holder: Optional[str]  # source text of the name or attribute it is assigned to
    dataset: Optional[cst.BaseExpression]
    sampler: Optional[cst.BaseExpression]  # `sampler=` or `batch_sampler=` (None when absent or `None`)
    shuffle: Optional[cst.BaseExpression]


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position] if 0 <= position < len(positional) else None


class DataPipeline:
    """Which loaders the file builds with which samplers, and the loops that draw from them (asked by the
    distributed rules over `Distributed`'s names and flows)."""

    def __init__(self, distributed: Distributed) -> None:
        self.names, self.flows = distributed.names, distributed.flows
        self._loops: Optional[list[cst.For]] = None

    def holder(self, call: cst.Call, through_wrapper: bool = False) -> Optional[str]:
        """The name or attribute the call's result is assigned to; `through_wrapper`: also as the first argument
        of a call that returns it wrapped (`loader = fabric.setup_dataloaders(DataLoader(...))`)."""
        parent = self.flows.parent(call)
        if through_wrapper and isinstance(parent, cst.Arg) and parent.keyword is None \
                and isinstance(wrapper := self.flows.parent(parent), cst.Call) and wrapper.args[0] is parent:
            parent = self.flows.parent(wrapper)
        if isinstance(parent, cst.Element) and isinstance(display := self.flows.parent(parent), cst.Tuple) \
                and isinstance(statement := self.flows.parent(display), cst.Assign) and len(statement.targets) == 1 \
                and isinstance(targets := statement.targets[0].target, cst.Tuple) \
                and len(targets.elements) == len(display.elements) and not any(isinstance(e, cst.StarredElement) for e in display.elements):
            return code_of(targets.elements[display.elements.index(parent)].value, 200)  # `dev, loader = d, DataLoader(...)`
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return code_of(parent.targets[0].target, 200)
        if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)):
            return code_of(parent.target, 200)
        return None

    def holders(self, loader: Loader) -> list[str]:
        """Where the loader is held: its own holder, and what each caller of a same-file function returning it
        holds of the result (`loader = make_loader()`, `train_dl, val_dl = make_loaders()`)."""
        holders = [loader.holder] if loader.holder is not None else []
        factory, element = self.returned_by(loader.call)
        for call in self.flows.calls() if factory is not None else ():
            parent = self.flows.parent(call)
            if (self.names.definition_of(call) or method_of_instance(self.names, call)) is not factory \
                    or not isinstance(parent, cst.Assign):  # `make_loaders(...)`, `Builder().loaders(...)`
                continue
            target = parent.targets[0].target
            if element is None:
                holders.append(code_of(target, 200))
            elif isinstance(target, cst.Tuple) and element < len(target.elements):
                holders.append(code_of(target.elements[element].value, 200))
        return holders

    def returned_by(self, call: cst.Call) -> tuple[Optional[cst.FunctionDef], Optional[int]]:
        """The function whose `return` hands back the call's value, directly or through the name holding it, and
        its place in a returned tuple (None: the whole value)."""
        function, holder = self.flows.enclosing_function(call), self.holder(call)
        stack: list[cst.CSTNode] = [function.body] if function is not None else []
        while stack:
            item = stack.pop()
            stack.extend(child for child in children(item) if not isinstance(child, (cst.FunctionDef, cst.ClassDef)))
            if not isinstance(item, cst.Return) or item.value is None:
                continue
            values = [e.value for e in item.value.elements] if isinstance(item.value, cst.Tuple) else [item.value]
            for position, value in enumerate(values):
                if value is call or (holder is not None and code_of(value, 200) == holder):
                    return function, (position if isinstance(item.value, cst.Tuple) else None)
        return None, None

    def loaders(self) -> list[Loader]:
        found = []
        for call in self.flows.calls():
            if self.names.qualify(call.func) in LOADER_CLASSES:
                sampler = argument(call, 3, "sampler") or argument(call, 4, "batch_sampler")
                if isinstance(sampler, cst.Name) and sampler.value == "None":
                    sampler = None
                found.append(Loader(call, self.holder(call, through_wrapper=True), argument(call, 0, "dataset"), sampler,
                                    argument(call, 2, "shuffle")))
        return found

    def sampler_kind(self, sampler: cst.BaseExpression, depth: int = 0) -> str:
        """"distributed", "plain" (a single-process torch sampler) or "unknown" (a project's own, a helper's)."""
        if isinstance(sampler, cst.Call):
            qualified = self.names.qualify(sampler.func) or ""
            if qualified in DISTRIBUTED_SAMPLERS:
                return "distributed"
            if qualified in PLAIN_SAMPLERS:
                return "plain"
            if qualified.endswith("BatchSampler") and sampler.args:  # BatchSampler(inner, ...)
                return self.sampler_kind(sampler.args[0].value, depth + 1)
            return "unknown"
        if isinstance(sampler, cst.Name) and sampler in self.names.uses and depth < 4:
            values = [b.bound_value for b in self.names.bindings_of(sampler)]
            kinds = {self.sampler_kind(v, depth + 1) for v in values if v is not None}
            return kinds.pop() if len(kinds) == 1 else "unknown"
        return "unknown"

    def loops_over(self, holder: str) -> list[cst.For]:
        """The `for` loops whose iterable is the held loader (`loader`, `enumerate(loader)`, `tqdm(self.loader)`)."""
        if self._loops is None:  # the file's `for` loops, found once: rules ask this per loader and per call
            self._loops = []
            stack: list[cst.CSTNode] = [self.flows.module] if self.flows.module is not None else []
            while stack:
                node = stack.pop()
                if isinstance(node, cst.For):
                    self._loops.append(node)
                stack.extend(children(node))
        return [loop for loop in self._loops if _contains_text(loop.iter, holder)]

    def enclosing_loop(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        current = self.flows.parent(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(current, (cst.For, cst.While)):
                return current
            current = self.flows.parent(current)
        return None


def _contains_text(expr: cst.CSTNode, text: str) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)) and code_of(node, 200) == text:
            return True
        stack.extend(children(node))
    return False
