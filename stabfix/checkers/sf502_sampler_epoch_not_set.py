"""SF502 sampler-epoch-not-set: a shuffling `DistributedSampler` draws the same order every epoch.

A query over the model's `distributed` part (its `pipeline`): a `DistributedSampler(...)` that shuffles
(`shuffle` absent or not a literal `False`), held in a name or attribute, feeding a `DataLoader` that is
drawn from more than once: a loop over the loader (or a call handed the loader or the sampler) inside
another loop, the epoch loop. It is reported when nothing in the file calls `set_epoch` on it: not on the
sampler, not on `<loader>.sampler`, and no same-file helper it is handed to calls `set_epoch` on what it
receives; a `set_epoch` call on a receiver the file does not know (another function's parameter) is
trusted. A single pass (no enclosing loop) is left alone: the first epoch's order is as good as any.

The fix inserts `<sampler>.set_epoch(<epoch>)` as the epoch loop's first statement, where the loop is a
`for <name> in ...` and the sampler is held in a plain name or `self` attribute. It is unsafe: every epoch
after the first draws a new order, so the run computes different values (that is what it fixes).
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.syntax import parsed_statement
from stabfix.shape import Shape
from stabfix.shape_queries import STATEMENT_LOOPS, calls_named
from stabfix.findings import Fix
from stabfix.model.domain.data_loaders import DISTRIBUTED_SAMPLERS, argument
from stabfix.model.source.syntax import code_of, walk
from stabfix.model.source.node_fields import children


class SamplerEpochNotSet(Checker):
    code = "SF502"
    tokens = ("DistributedSampler",)
    needs = ("distributed",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # a sampler built (any alias) here, and an epoch loop around its use
        return bool(calls_named(shape, ("DistributedSampler",))) and bool(shape.nodes(*STATEMENT_LOOPS))

    def leave_Module(self, original_node: cst.Module) -> None:
        names, flows = self.model.names, self.model.flows
        pipeline = self.model.distributed.pipeline
        samplers = [call for call in flows.calls() if names.qualify(call.func) in DISTRIBUTED_SAMPLERS]
        if not samplers:
            return
        set_epoch_receivers = [code_of(call.func.value, 200) for call in flows.calls()
                               if type(call.func) is cst.Attribute and call.func.attr.value == "set_epoch"]
        holders = {pipeline.holder(call) for call in samplers}
        loader_holders = {loader.holder for loader in pipeline.loaders() if loader.sampler is not None}
        if any(receiver not in holders and receiver.removesuffix(".sampler") not in loader_holders
               for receiver in set_epoch_receivers):
            return  # `set_epoch` on a parameter or an unknown object: a helper may set it for this sampler
        for call in samplers:
            shuffle = argument(call, 3, "shuffle")
            if type(shuffle) is cst.Name and shuffle.value == "False":
                continue
            holder = pipeline.holder(call)
            loaders = [loader.holder for loader in pipeline.loaders() if loader.holder is not None and loader.sampler is not None
                       and (loader.sampler is call or holder is not None and holder in self._wrapped(loader.sampler))]
            if holder is None and not loaders:
                continue
            receivers = {holder, *(f"{loader}.sampler" for loader in loaders)} - {None}
            if receivers & set(set_epoch_receivers) or set(loaders) & self.model.distributed.handled_loaders():
                continue  # set, or the loader is handed to a library that replaces it (opacus, accelerate)
            if set_epoch_receivers and not any(_backward_in(loop.body) for text in loaders
                                               for loop in pipeline.loops_over(text)):
                continue  # the file sets the epoch of its training sampler; this one feeds no visible training
            epoch_loop = self._epoch_loop({*loaders, *({holder} - {None})})
            if epoch_loop is None or any(node is call for node in walk(epoch_loop)):
                continue  # a single pass, or a new sampler built every epoch
            self.report(call, self._message(call, holder, loaders), self._fix(epoch_loop, holder))

    def _epoch_loop(self, held: set[str]) -> cst.CSTNode | None:
        """The loop that draws from the loader more than once: around a loop over it, or around a call it is handed to."""
        pipeline, flows = self.model.distributed.pipeline, self.model.flows
        draws: list[cst.CSTNode] = [loop for text in held for loop in pipeline.loops_over(text)]
        handed = [call for call in flows.calls() if any(code_of(arg.value, 200) in held for arg in call.args)]
        if any(self.model.distributed.sets_epoch(call) for call in handed):
            return None  # a helper (here or in another scanned file) sets the epoch on what it is handed
        draws += [call for call in handed if not (self.model.names.qualify(call.func) or "").startswith("torch.")]
        for draw in draws:
            outer = pipeline.enclosing_loop(draw)
            while outer is not None and type(outer) is cst.For and any(node is draw for node in walk(outer.iter)):
                outer = pipeline.enclosing_loop(outer)  # `for b in enumerate(loader)`: the loop over the loader itself
            if outer is not None:
                return outer
            if type(draw) is cst.Call and self._loops_inside(draw):
                return None  # the callee runs its own epochs: its loop is not this file's to judge
        return None

    def _wrapped(self, sampler: cst.BaseExpression) -> set[str]:
        """The sampler a loader's `sampler=`/`batch_sampler=` holds: itself, or what a `BatchSampler(inner, ...)` wraps."""
        found = {code_of(sampler, 200)}
        values = [b.bound_value for b in self.model.names.bindings_of(sampler)] \
            if type(sampler) is cst.Name and sampler in self.model.names.uses else [sampler]
        for value in values:
            if type(value) is cst.Call and value.args and (self.model.names.qualify(value.func) or "").endswith("BatchSampler"):
                found.add(code_of(value.args[0].value, 200))
        return found

    def _loops_inside(self, call: cst.Call) -> bool:
        definition = self.model.names.definition_of(call)
        stack: list[cst.CSTNode] = [definition.body] if definition is not None else []
        while stack:
            node = stack.pop()
            if type(node) in (cst.For, cst.While) and any(type(n) in (cst.For, cst.While) for n in walk(node.body)):
                return True
            stack.extend(children(node))
        return False

    def _message(self, call: cst.Call, holder: str | None, loaders: list[str]) -> str:
        what = f"`{holder}`" if holder else f"the sampler of `{loaders[0]}`"
        return (f"{what} (`{code_of(call, 50)}`) shuffles, but its `set_epoch` is never called: a `DistributedSampler` "
                f"seeds its shuffle with the epoch it was last given, so every epoch draws the same order on every "
                f"rank; call `{holder or loaders[0] + '.sampler'}.set_epoch(epoch)` at the top of the epoch loop")

    def _fix(self, loop: cst.CSTNode, holder: str | None) -> Fix | None:
        if type(loop) is not cst.For or type(loop.target) is not cst.Name or holder is None \
                or not (holder.isidentifier() or holder.startswith("self.") and holder[5:].isidentifier()):
            return None
        if type(loop.body) is not cst.IndentedBlock or loop.target.value == "_":
            return None
        line = parsed_statement(f"{holder}.set_epoch({loop.target.value})\n")
        body = loop.body.with_changes(body=[line, *loop.body.body])
        return Fix("unsafe", f"call `{holder}.set_epoch({loop.target.value})` at the top of the epoch loop (unsafe: "
                   "each epoch then draws a new order, so the run's values change)", {loop.body: body})


def _backward_in(body: cst.CSTNode) -> bool:
    return any(type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "backward"
               for node in walk(body))

