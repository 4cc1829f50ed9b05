"""Distributed training: is this a multi-process script, which modules are wrapped, which loaders a framework shards.

Queried after the traversal (built on `names` and `flows`):

- `evidence()`: the first sign that the file runs as one of several processes: a process group
  (`init_process_group`), a DDP/FSDP/DeepSpeed wrap, an accelerate `Accelerator`, a Fabric, a torchrun
  environment read (`os.environ["LOCAL_RANK"]`, `os.getenv("RANK")`), `mp.spawn`; None for a plain script.
- `ranks` (`ranks.py`), also asked here: `rank_zero_test(expr)` (a test holding on global rank 0 only),
  `rank_guarded(node)` (only rank 0 runs it), `varies_by_rank(test)`, `mentions_rank(expr)`, `environment_rank_read(node)`.
- `wrapped(expr)`: whether an expression holds a DDP/DataParallel-wrapped module (`state_dict()` keys prefixed
  `module.`): "always", "prepared" (a module handed back by accelerate's `accelerator.prepare`, DDP-wrapped
  when several processes run), "sometimes" (a conditional wrap, or a mix) or None; FSDP is not a prefixing wrap.
- `runs_distributed(node)`: the code is part of the run the file sets up (module level, the function or class
  that sets it up, or a same-file function they call), not a helper of a utility module that reads `RANK`.
- `pipeline` (`data_loaders.py`): the loaders the file builds (`DataLoader(...)` with its holder, dataset, sampler,
  shuffle), what kind of sampler an expression is, the loops drawing from a loader, where a loader is held.
- `sets_epoch(call)`: the call runs a function, of this file or another scanned one, that calls `set_epoch`.
- `handled_loaders()`: the loaders a framework shards (passed to `accelerator.prepare`, even in a tuple,
  `fabric.setup_dataloaders`), and `framework_shards()`: a Lightning `Trainer` or HF `Trainer` runs the loop.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.domain.data_loaders import DataPipeline
from stabfix.model.domain.ranks import RANK_ENV, RankFacts, env_name, returned_values
from stabfix.model.calls.events import Events
from stabfix.model.flow.callers import Callers
from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import code_children

GROUP_SETUP = frozenset({
    "torch.distributed.init_process_group", "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.init_device_mesh", "torch.multiprocessing.spawn", "deepspeed.initialize",
    "deepspeed.init_distributed", "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric",
})
# functions that take a loader and hand back one that draws each rank's own shard
LOADER_SHARDING_FUNCTIONS = frozenset({"accelerate.data_loader.prepare_data_loader"})
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
SHARDING_TRAINERS = frozenset({"lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer",
                               "transformers.Trainer", "transformers.Seq2SeqTrainer", "trl.SFTTrainer"})


class Distributed:
    def __init__(self, imports: ImportTracker, names: Names, flows: ValueFlows, project=None,
                 events: Optional[Events] = None) -> None:
        self.imports = imports
        self.project = project  # the other files of the scan (`ProjectQueries`), or None
        self.names = names
        self.flows = flows
        self._evidence: Optional[tuple[Optional[cst.CSTNode]]] = None
        self.ranks = RankFacts(names, flows, Callers(names, events) if events is not None else None, project)
        self.pipeline = DataPipeline(names, flows)
        self._setups: Optional[list[cst.CSTNode]] = None  # every node that sets the run up
        # The rank facts, asked of the run as a whole (`ranks.py`).
        self.environment_rank_read = self.ranks.environment_rank_read
        self.mentions_rank = self.ranks.mentions_rank
        self.varies_by_rank = self.ranks.varies_by_rank
        self.rank_zero_test = self.ranks.rank_zero_test
        self.rank_guarded = self.ranks.rank_guarded

    # --- the script --------------------------------------------------------------------------------
    def evidence(self) -> Optional[cst.CSTNode]:
        if self._evidence is None:
            found = next((call for call in self.flows.calls() if self._sets_up(call)), None)
            stack: list[cst.CSTNode] = [self.flows.module] if found is None and self.flows.module is not None else []
            while stack and found is None:  # `int(os.environ["LOCAL_RANK"])`: launched by torchrun
                node = stack.pop()
                found = node if self.environment_rank_read(node) else None
                stack.extend(code_children(node))  # a rank read is a subscript, never trivia
            self._evidence = (found,)
        return self._evidence[0]

    def _sets_up(self, call: cst.Call) -> bool:
        qualified = self.names.qualify(call.func) or ""
        if qualified in GROUP_SETUP or qualified in WRAPPERS:
            return True
        if qualified in ("os.getenv", "os.environ.get") and call.args:
            return env_name(call.args[0].value) in RANK_ENV
        return False

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
                ([self.evidence()] if type(self.evidence()) is not cst.Call else [])
        owner = self.flows.parent(self.flows.parent(function))
        scope = owner if type(owner) is cst.ClassDef else function
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
        (each element of a tuple too) or as the loader of accelerate's `prepare_data_loader(loader, ...)`: those
        loaders get a distributed sampler from the framework."""
        handled: set[str] = set()
        for call in self.flows.calls():
            func = call.func
            if type(func) is cst.Attribute and func.attr.value in ("prepare", "prepare_data_loader", "setup_dataloaders") \
                    and self._framework_object(func.value):
                for arg in call.args:
                    values = arg.value.elements if type(arg.value) in (cst.Tuple, cst.List) else [arg]
                    handled.update(code_of(v.value, 200) for v in values)
            elif self.names.qualify(func) in LOADER_SHARDING_FUNCTIONS and call.args:
                loader = next((a for a in call.args if a.keyword is None or a.keyword.value == "dataloader"), None)
                handled.update({code_of(loader.value, 200)} if loader is not None else set())
            handled.update(self._rewrapped(call))
        return handled

    def _rewrapped(self, call: cst.Call) -> set[str]:
        """`model, opt, loader = engine.make_private(..., data_loader=loader)`: a library call takes the loader and
        hands back its own in its place (opacus, DeepSpeed, a framework's setup): the original is no longer drawn."""
        parent = self.flows.parent(call)
        if type(parent) is not cst.Assign or (self.names.qualify(call.func) or "").startswith("torch."):
            return set()
        targets = set()
        for target in parent.targets:
            elements = target.target.elements if type(target.target) in (cst.Tuple, cst.List) else None
            targets.update(code_of(e.value, 200) for e in elements) if elements else targets.add(code_of(target.target, 200))
        return {code_of(arg.value, 200) for arg in call.args} & targets

    def framework_object(self, receiver: cst.BaseExpression) -> bool:
        """`receiver` is an accelerate `Accelerator` or a Fabric the file builds (or, in a distributed file, a
        parameter or `self.<attr>` that holds one)."""
        return self._framework_object(receiver)

    def _framework_object(self, receiver: cst.BaseExpression) -> bool:
        if type(receiver) is cst.Name:
            for binding in self.names.bindings_of(receiver) if receiver in self.names.uses else []:
                value = binding.bound_value
                if type(value) is cst.Call and self.names.qualify(value.func) in GROUP_SETUP:
                    return True
            return self.names.qualify(receiver) is None and bool(self.evidence())  # a parameter: the script's own
        return type(receiver) is cst.Attribute  # self.accelerator, self.fabric

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
        if type(value) is not cst.Call or type(value.func) is not cst.Attribute \
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
            if type(func) is cst.Attribute and func.attr.value in _MODULE_ONLY_METHODS and dotted_name(func.value) == spelled:
                return True
        return False

    def _is_wrap(self, value: Optional[cst.BaseExpression], depth: int) -> bool:
        if type(value) is not cst.Call:
            return False
        if self.names.qualify(value.func) in PREFIXING_WRAPPERS:
            return True
        func = value.func  # `nn.DataParallel(net).cuda()`: a module's `.to`/`.cuda`/`.train` return the module
        if type(func) is cst.Attribute and func.attr.value in _RETURNS_SELF:
            inner = func.value
            return self._is_wrap(inner, depth + 1) if type(inner) is cst.Call else self.wrapped(inner, depth + 1) == "always"
        definition = self.names.definition_of(value)
        return definition is not None and any(
            self.wrapped(returned, depth + 1) == "always" or self._is_wrap(returned, depth + 1)
            for returned in returned_values(definition))

    def _reaching_bindings(self, expr: cst.BaseExpression) -> list[Binding]:
        if type(expr) is cst.Name and expr in self.names.uses:
            return self.names.reaching(expr) or self.names.bindings_of(expr)
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:  # `self.model`, whatever the receiver's name
            owner = self.names.receiver_class(expr.value)
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

def _calls_method(node: cst.CSTNode, method: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value == method:
            return True
        stack.extend(code_children(current))
    return False


def _contains(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack = [outer]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(code_children(current))
    return False

