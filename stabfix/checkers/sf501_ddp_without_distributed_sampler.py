"""SF501 ddp-without-distributed-sampler: every rank of a DDP/FSDP job trains on the same samples.

A query over the model's `distributed` part: in a file that runs as one of several processes
(`Distributed.evidence`: a process group, a DDP/FSDP wrap, an `Accelerator`, a torchrun environment read),
a `DataLoader(...)` whose batches reach a backward pass (a `for` over the loader or `iter(loader)` in a step
loop, here or in a same-file function it is handed to, with a `backward` in its body), or that shuffles and is
drawn from (looped over, or handed to code the file does not show), and that nothing shards: no
`DistributedSampler` (a `sampler=` that is a single-process torch sampler still counts as none; a sampler of
unknown kind, built by a helper or another file, is trusted), not handed to `accelerator.prepare`
(also in a tuple) or `fabric.setup_dataloaders`, not under a Lightning or HF `Trainer`, not built only on
rank 0, and not over a dataset that already depends on the rank (`split_dataset_by_node(ds, rank=...)`).

The fix is unsafe: it hands the loader a `DistributedSampler` over its dataset (shuffling moves into the
sampler), which changes which samples each rank sees, on purpose.
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.amp import torch_spelling
from stabfix.model.domain.data_loaders import Loader
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import children
from stabfix.shape import Shape


ITERABLE_BASES = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})


class DdpWithoutDistributedSampler(Checker):
    code = "SF501"
    tokens = ("DataLoader",)
    also_needs = (("distributed", "DistributedDataParallel", "DDP", "FSDP", "fully_shard", "Accelerator", "RANK",
                   "deepspeed", "Fabric"),)
    needs = ("distributed",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a `DataLoader(...)` (however imported) given a dataset (`_dataset_sharded`: none shown, nothing judged)
        return any(any(type(a) is not ast.Starred for a in call.args) or any(k.arg == "dataset" for k in call.keywords)
                   for call in shape.calls(*shape.spellings("DataLoader")))

    def leave_Module(self, original_node: cst.Module) -> None:
        distributed = self.model.distributed
        if distributed.evidence() is None or distributed.framework_shards():
            return
        pipeline = distributed.pipeline
        handled = distributed.handled_loaders()
        for loader in pipeline.loaders():
            if loader.holder is None or loader.holder in handled or code_of(loader.call, 200) in handled:
                continue
            if loader.sampler is not None and pipeline.sampler_kind(loader.sampler) != "plain":
                continue
            if distributed.rank_guarded(loader.call) or self._dataset_sharded(loader):
                continue
            if not (self._trains_on(loader.holder) or self._shuffled_and_drawn(loader)):
                continue
            self.report(loader.call, self._message(loader), self._fix(loader))

    def _dataset_sharded(self, loader: Loader) -> bool:
        dataset = loader.dataset
        if dataset is None:
            return True  # `DataLoader(**kwargs)`: nothing to judge
        distributed = self.model.distributed
        if type(dataset) is cst.Name and dataset in self.model.names.uses:
            values = [b.bound_value for b in self.model.names.bindings_of(dataset) if b.bound_value is not None]
            return any(distributed.mentions_rank(value) for value in values) or self._iterable(values)
        return distributed.mentions_rank(dataset)

    def _iterable(self, values: list[cst.BaseExpression]) -> bool:
        """A dataset built from a same-file `IterableDataset` subclass: it yields its own stream (no sampler applies)."""
        names = self.model.names
        for value in values:
            func = value.func if type(value) is cst.Call else None
            classes = [b.node for b in names.bindings_of(func) if b.kind == "class"] \
                if type(func) is cst.Name and func in names.uses else []
            if any(type(owner) is cst.ClassDef and any(names.qualify(base.value) in ITERABLE_BASES for base in owner.bases)
                   for owner in classes):
                return True
        return False

    def _trains_on(self, holder: str) -> bool:
        """A loop over the loader runs a backward pass, here or in a same-file function the loader is handed to."""
        pipeline, flows = self.model.distributed.pipeline, self.model.flows
        if any(_backward_in(loop.body) for loop in pipeline.loops_over(holder)):
            return True
        for call in flows.calls():  # `it = iter(loader)` ... `next(it)` in a step loop
            if type(call.func) is cst.Name and call.func.value == "iter" and call.args \
                    and code_of(call.args[0].value, 200) == holder:
                loop = pipeline.enclosing_loop(call) or _first_loop(flows.enclosing_function(call))
                if loop is not None and _backward_in(loop):
                    return True
        for call in self.model.flows.calls():
            definition = self.model.names.definition_of(call)
            if definition is None:
                continue
            for position, arg in enumerate(call.args):
                if code_of(arg.value, 200) != holder:
                    continue
                parameter = _parameter(definition, position, arg, call)
                if parameter and any(_backward_in(loop.body) for loop in pipeline.loops_over(parameter)
                                     if _inside(loop, definition, self.model.flows)):
                    return True
        return False

    def _shuffled_and_drawn(self, loader: Loader) -> bool:
        """A loader that shuffles (`shuffle=True`: a training loader; evaluation keeps its order) and is drawn
        from: looped over, or handed to code this file does not show (a base class's epoch method)."""
        if not (type(loader.shuffle) is cst.Name and loader.shuffle.value == "True"):
            return False
        if self.model.distributed.pipeline.loops_over(loader.holder):
            return True
        return any(code_of(arg.value, 200) == loader.holder and self.model.names.definition_of(call) is None
                   and not (self.model.names.qualify(call.func) or "").startswith("torch.")
                   for call in self.model.flows.calls() for arg in call.args)

    def _message(self, loader: Loader) -> str:
        sampler = f" (its `{code_of(loader.sampler, 40)}` draws from the whole dataset)" if loader.sampler is not None else ""
        return (f"`{loader.holder}` feeds a training loop of a distributed run with no `DistributedSampler`{sampler}: "
                f"every rank draws the same batches, so N GPUs train N copies of one epoch; give it "
                f"`sampler=DistributedSampler(dataset)` (or hand it to `accelerator.prepare`)")

    def _fix(self, loader: Loader) -> Fix | None:
        if loader.sampler is not None or type(loader.dataset) not in (cst.Name, cst.Attribute):
            return None
        shuffled = type(loader.shuffle) is cst.Name and loader.shuffle.value == "True"
        if loader.shuffle is not None and not shuffled and not (type(loader.shuffle) is cst.Name and loader.shuffle.value == "False"):
            return None  # `shuffle=args.shuffle`: the sampler's order cannot be chosen here
        torch, imports = torch_spelling(self.model.imports)
        sampler = cst.parse_expression(
            f"{torch}.utils.data.DistributedSampler({code_of(loader.dataset, 200)}{'' if shuffled else ', shuffle=False'})")
        if any(arg.keyword is None and arg.value is loader.shuffle for arg in loader.call.args):
            return None  # a positional `shuffle`: rewriting positions is not worth the risk
        args = [arg.with_changes(value=cst.Name("False")) if arg.keyword is not None and arg.keyword.value == "shuffle"
                else arg for arg in loader.call.args]
        args.append(cst.Arg(sampler, keyword=cst.Name("sampler"), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        return Fix("unsafe", "shard the loader with `DistributedSampler` (unsafe: each rank now sees its own part of "
                   "the data, a different run)", {loader.call: loader.call.with_changes(args=args)}, imports=imports)


def _backward_in(body: cst.CSTNode) -> bool:
    stack = [body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("backward", "manual_backward"):
            return True
        stack.extend(child for child in children(node) if type(child) not in (cst.FunctionDef, cst.ClassDef))
    return False


def _first_loop(function: cst.FunctionDef | None) -> cst.CSTNode | None:
    body = function.body.body if function is not None and type(function.body) is cst.IndentedBlock else ()
    return next((item for item in body if type(item) in (cst.For, cst.While)), None)


def _parameter(function: cst.FunctionDef, position: int, arg: cst.Arg, call: cst.Call) -> str | None:
    """The parameter of `function` that `arg` of `call` binds: a method called on an instance or a class
    (`runner.run_epoch(dl)`, `self.fit(dl)`) binds its first parameter itself, whatever it is called."""
    if arg.keyword is not None:
        return arg.keyword.value
    params = [p.name.value for p in function.params.params]
    bound_first = type(call.func) is cst.Attribute and not any(
        dotted_name(d.decorator) == "staticmethod" for d in function.decorators)
    if params and bound_first:
        params = params[1:]
    return params[position] if position < len(params) and not arg.star else None


def _inside(node: cst.CSTNode, function: cst.FunctionDef, flows) -> bool:
    current = flows.parent(node)
    while current is not None and current is not function:
        current = flows.parent(current)
    return current is function
