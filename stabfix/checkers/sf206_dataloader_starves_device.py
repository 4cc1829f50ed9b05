"""SF206 dataloader-starves-device: the accelerator waits while the training process prepares every batch itself.

A query over the model: a `DataLoader(...)` (`domain/data_loaders.py`, the `distributed` part's `pipeline`) whose
batches reach an accelerator in a training loop, in one of two shapes:
- starved: it loads in the training process (`num_workers` absent, `0`, or a name bound only to `0`) over a dataset
  whose `__getitem__` does per-item work (`calls/datasets.py`: opens or decodes files, tokenizes, runs transforms;
  a dataset class of another scanned file through the project index). The loader feeds an accelerator when a loop
  over it (here, or in a same-file function it is handed to) runs a backward pass and moves the batch with
  `.to(device)`/`.cuda()` to a device not shown to be the host (`calls/devices.py`), when it is handed to
  `accelerator.prepare`/`fabric.setup_dataloaders` (they place the batches) of an accelerator not built for the CPU,
  or when a Lightning module's or data module's `train_dataloader` returns it and no `Trainer` of the file runs on the CPU
  (`calls/runners.py`: a runner built for the CPU here, or in a function or class of another scanned file this file calls);
- unpinned: a training loop over it moves the batch with `non_blocking=True` while the loader does not pin
  (`pin_memory` absent or `False`): a copy from pageable memory is staged and synchronous, so `non_blocking` buys nothing.
Settings from a config (`args.workers`) or `**kwargs` are the author's choice: silent. Fix (unsafe: workers need a
picklable dataset, change per-worker random state): `num_workers=4, pin_memory=True, persistent_workers=True` or `pin_memory=True`.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.calls.datasets import DatasetWork
from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.calls.runners import cpu_runners
from stabfix.model.domain.data_loaders import Loader, argument, drawn_names, own_nodes as _walk, root_name
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape

LIGHTNING_BASES = ("lightning.", "pytorch_lightning.")


class DataloaderStarvesDevice(Checker):
    code = "SF206"
    tokens = ("DataLoader",)
    needs = ("distributed", "values")
    _on_host: Optional[frozenset[str]] = None

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # a loader showing its settings (no `**`), maybe in process or unpinned (below)
        return any(all(k.arg for k in c.keywords) and (shape.unset_or(c, 5, "num_workers", (0,)) or shape.unset_or(c, 7, "pin_memory", (False,)))
                   for c in shape.calls(*shape.spellings("DataLoader")))

    def leave_Module(self, original_node: cst.Module) -> None:
        self.devices = DeviceKinds(self.model.names)
        self._spellings: dict[int, str] = {}  # argument ids -> `code_of(argument, 200)`
        work = DatasetWork(self.model.names, self.context.project)
        for loader in self.model.distributed.pipeline.loaders():
            call = loader.call
            if any(arg.star == "**" for arg in call.args):
                continue  # `DataLoader(ds, **loader_kwargs)`: its settings are not shown
            loops = self._training_loops(loader)
            if self._in_process(call) and (self._loops_move(loops) or self._framework_places(loader)):
                per_item = work.per_item(loader.dataset)
                if per_item is not None:
                    self.report(call, self._starved_message(loader, per_item), self._fix(call, starved=True))
                    continue
            if _unpinned(argument(call, 7, "pin_memory")) and self._loops_move(loops, non_blocking=True):
                self.report(call, f"`{loader.holder or 'this loader'}` does not pin its batches, yet the training loop "
                            f"moves them with `non_blocking=True`: a copy from pageable memory is staged and synchronous, "
                            f"so the host still waits; set `pin_memory=True`", self._fix(call, starved=False))

    def _in_process(self, call: cst.Call) -> bool:
        """`num_workers` absent, `0`, or a name every binding of which is `0`: batches load in the training process."""
        workers = argument(call, 5, "num_workers")
        if workers is None:
            return True
        if type(workers) is cst.Name and workers in self.model.names.uses:
            values = [b.bound_value for b in self.model.names.bindings_of(workers)]
            return bool(values) and all(type(v) is cst.Integer and v.value == "0" for v in values)
        return type(workers) is cst.Integer and workers.value == "0"

    def _training_loops(self, loader: Loader) -> list[cst.For]:
        """The `for` loops over the loader that run a backward pass: here, in a same-file function it is handed to, or
        over what a caller holds of it when a function of the file returns it (`train_dl, val_dl = make_loaders()`)."""
        pipeline, names, loops = self.model.distributed.pipeline, self.model.names, []
        for holder in pipeline.holders(loader):
            loops.extend(pipeline.loops_over(holder))
            for call in self.model.flows.calls():
                handed = [(position, arg) for position, arg in enumerate(call.args) if self._spelled(arg.value) == holder]
                if handed and handed[0][0] == 0 and pipeline.holder(call):
                    loops.extend(pipeline.loops_over(pipeline.holder(call)))  # `bar = tqdm(loader)` ... `for x in bar`
                # `Trainer().fit(loader)` too; asked only where the loader is handed over
                definition = (names.definition_of(call) or method_of_instance(names, call)) if handed else None
                params = [p.name.value for p in definition.params.params] if definition is not None else []
                if definition is not None and type(self.model.flows.parent(self.model.flows.parent(definition))) is cst.ClassDef:
                    params = params[1:]  # a method: its receiver, whatever its name, is not an argument
                for position, arg in [(position, arg) for position, arg in handed if not arg.star]:
                    name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
                    loops.extend(loop for loop in (pipeline.loops_over(name) if name and definition is not None else ())
                                 if self.model.flows.enclosing_function(loop) is definition)
        return [loop for loop in loops if _runs_backward(loop.body)]

    def _spelled(self, expr: cst.BaseExpression) -> str:
        """`code_of(expr, 200)`, once per argument of the file (every loader's holders are compared with it)."""
        if id(expr) not in self._spellings:
            self._spellings[id(expr)] = code_of(expr, 200)
        return self._spellings[id(expr)]

    def _loops_move(self, loops: list[cst.For], non_blocking: bool = False) -> bool:
        """A loop moves a batch drawn from the loader to a device not shown to be the host (`non_blocking=True` too)."""
        for loop in loops:
            drawn = drawn_names(loop)
            for node in _walk(loop.body):
                if not (type(node) is cst.Call and type(node.func) is cst.Attribute
                        and node.func.attr.value in ("to", "cuda")):
                    continue
                if non_blocking and not any(arg.keyword is not None and arg.keyword.value == "non_blocking"
                                            and code_of(arg.value, 20) == "True" for arg in node.args):
                    continue
                if node.func.attr.value == "to":
                    if not self.devices.moves_to_accelerator(node):
                        continue
                receiver = node.func.value
                if any(type(part) is cst.Attribute and part.attr.value == "pin_memory" for part in _walk(receiver)):
                    continue
                root = root_name(receiver)
                if root in drawn or self.model.values.value_of(receiver).batch:
                    return True
        return False

    def _framework_places(self, loader: Loader) -> bool:
        """accelerate/Fabric places the batches of a loader it prepares; Lightning those `train_dataloader` returns."""
        calls, qualify = self.model.flows.calls(), self.model.names.qualify
        if loader.holder is not None and loader.holder in self.model.distributed.handled_loaders():
            trains = any(_runs_backward(loop.body) for loop in self.model.distributed.pipeline.loops_over(loader.holder)) \
                or any(type(c.func) is cst.Attribute and c.func.attr.value == "backward" for c in calls)
            return trains and "framework" not in self._cpu_runners()
        method = self.model.distributed.pipeline.returned_by(loader.call)[0]
        if method is None or method.name.value != "train_dataloader":
            return False
        owner = self.model.flows.parent(self.model.flows.parent(method))  # the class body's block, then the class
        if type(owner) is not cst.ClassDef or not any((qualify(base.value) or "").startswith(LIGHTNING_BASES) for base in owner.bases):
            return False
        return not {"framework", "trainer"} & self._cpu_runners()

    def _cpu_runners(self) -> frozenset[str]:
        """The CPU runners built here or by a function of another file (asked last and once: it may read other files)."""
        if self._on_host is None:
            self._on_host = cpu_runners(self.model.flows.calls(), self.model.names.qualify, self.context.project)
        return self._on_host

    def _starved_message(self, loader: Loader, per_item: str) -> str:
        return (f"`{loader.holder or 'this DataLoader'}` loads every batch in the training process (`num_workers=0`) "
                f"while its dataset {per_item}: the accelerator idles while each batch is prepared; use worker "
                f"processes (`num_workers=4, pin_memory=True, persistent_workers=True`)")

    def _fix(self, call: cst.Call, starved: bool) -> Optional[Fix]:
        if any(arg.keyword is None and not arg.star for arg in call.args[5:]):
            return None  # settings passed by position: not rewritten
        wanted = {"num_workers": "4", "pin_memory": "True", "persistent_workers": "True"} if starved else {"pin_memory": "True"}
        args = [arg.with_changes(value=parsed_expression(wanted.pop(arg.keyword.value)))
                if arg.keyword is not None and arg.keyword.value in wanted else arg for arg in call.args]
        args += [cst.Arg(parsed_expression(value), keyword=cst.Name(key), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))) for key, value in wanted.items()]
        what = ("load batches in 4 worker processes into pinned memory (unsafe: workers need a picklable dataset and "
                "change per-worker random state)") if starved else "pin the loader's batches (unsafe: page-locked host memory)"
        return Fix("unsafe", what, {call: call.with_changes(args=args)})


def _unpinned(pin_memory: Optional[cst.BaseExpression]) -> bool:
    """`pin_memory` absent (torch's default `False`) or the literal `False`; a config value is not judged."""
    return pin_memory is None or (type(pin_memory) is cst.Name and pin_memory.value == "False")


def _runs_backward(body: cst.CSTNode) -> bool:
    return any(type(node) is cst.Call and type(node.func) is cst.Attribute
               and node.func.attr.value in ("backward", "manual_backward") for node in _walk(body))
