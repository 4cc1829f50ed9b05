"""SF503 checkpoint-written-by-every-rank: every process of a distributed run writes the same file at once.

A query over the model's `distributed` part: in a file that runs as one of several processes
(`Distributed.evidence`), a write of a file that every rank reaches: `torch.save(obj, path)`,
safetensors' `save_file`/`save_model`, `<model>.save_pretrained(dir)` (transformers writes on every process
unless told `is_main_process=` or given a `save_function=`), or `open(path, "w")`/`"a"` (a log or metrics
file). A write is left alone when only rank 0 runs it (`Distributed.rank_guarded`: under any rank-0 test,
after the other ranks return, in a `@rank_zero_only`/`@accelerator.on_main_process` function, in a function
every caller guards), when one process runs it (under `if <world size> <= 1:`: `domain/world_sizes.py`) or when
its path depends on the rank (one file per rank, on purpose).
`accelerator.save(...)` and `accelerate.utils.save` are never reported: accelerate writes on the main
process only (`save_on_each_node=True`: once per node). `trainer.save_model(...)` (HF) and Lightning's
checkpointing choose the rank themselves and are not writes this rule knows.

The fix is unsafe: it puts the statement under `if not torch.distributed.is_initialized() or
torch.distributed.get_rank() == 0:` (an accelerate script: `if accelerator.is_main_process:`); the other
ranks no longer write, and code that reads the file back must wait at a barrier first.
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.amp import torch_spelling
from stabfix.model.domain.data_loaders import argument
from stabfix.model.domain.world_sizes import WorldSizes
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape

SAVES = {"torch.save": (1, "f"), "torch.serialization.save": (1, "f"), "safetensors.torch.save_file": (1, "filename"),
         "safetensors.torch.save_model": (1, "filename")}
IN_MEMORY = frozenset({"io.BytesIO", "io.StringIO"})
HANDLED_KEYWORDS = frozenset({"is_main_process", "save_function"})


class CheckpointWrittenByEveryRank(Checker):
    code = "SF503"
    tokens = ("save", "open(")
    also_needs = (("distributed", "DistributedDataParallel", "DDP", "FSDP", "fully_shard", "Accelerator", "RANK",
                   "deepspeed", "Fabric"),)
    needs = ("distributed",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a write (`_write`): a save function however imported, a `.save_pretrained()` that does not choose the process, or
        # an `open()` with a literal mode that writes
        if shape.calls(*shape.spellings(*(name.rsplit(".", 1)[1] for name in SAVES))) or any(
                type(call.func) is ast.Attribute and not any(type(a) is ast.Starred for a in call.args)
                and not any(k.arg is None or k.arg in HANDLED_KEYWORDS for k in call.keywords)
                for call in shape.calls("save_pretrained")):
            return True
        modes = (m for call in shape.calls("open") if type(call.func) is ast.Name
                 for m in [*[a for a in call.args if type(a) is not ast.Starred][1:2], *(k.value for k in call.keywords if k.arg == "mode")])
        return any(type(m) is ast.Constant and isinstance(m.value, str) and set(m.value) & {"w", "a", "x"} for m in modes)

    def leave_Module(self, original_node: cst.Module) -> None:
        distributed = self.model.distributed
        if distributed.evidence() is None:
            return
        sizes = WorldSizes(self.model.names, distributed.flows, self.context.project)
        for call in self.model.flows.calls():
            what = self._write(call)
            if what is None:
                continue
            path = what[1]
            if distributed.rank_guarded(call) or sizes.single_process(call) \
                    or (path is not None and (distributed.mentions_rank(path) or self._in_memory(path))):
                continue
            if not distributed.runs_distributed(call) or self._caller_chooses_rank(call):
                continue
            self.report(call, self._message(call, what[0]), self._fix(call))

    def _write(self, call: cst.Call) -> tuple[str, cst.BaseExpression | None] | None:
        """What kind of file write the call is, and the path expression it writes to; None for other calls."""
        qualified = self.model.names.qualify(call.func)
        if qualified in SAVES:
            return "checkpoint", argument(call, *SAVES[qualified])
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "save_pretrained" and qualified is None:
            if any(arg.keyword is not None and arg.keyword.value in HANDLED_KEYWORDS or arg.star for arg in call.args):
                return None
            return "model directory", argument(call, 0, "save_directory")
        if type(func) is cst.Name and func.value == "open" and not self._rebound(func):
            mode = argument(call, 1, "mode")
            if type(mode) is cst.SimpleString and isinstance(mode.evaluated_value, str) \
                    and set(mode.evaluated_value) & {"w", "a", "x"}:
                return "file", argument(call, 0, "file")
        return None

    def _in_memory(self, path: cst.BaseExpression) -> bool:
        """`torch.save(obj, buffer)` with `buffer = io.BytesIO()`: no file is written."""
        names = self.model.names
        values = [b.bound_value for b in names.bindings_of(path)] if type(path) is cst.Name and path in names.uses else [path]
        return bool(values) and all(type(v) is cst.Call and names.qualify(v.func) in IN_MEMORY for v in values)

    def _caller_chooses_rank(self, call: cst.Call) -> bool:
        """The write sits in a function that takes a rank-0 flag (`def save_pretrained(..., is_main_process=True)`):
        its contract leaves the choice of the process to the caller."""
        function = self.model.flows.enclosing_function(call)
        params = function.params.params + function.params.kwonly_params if function is not None else ()
        return any(self.model.distributed.rank_zero_test(param.name) for param in params)

    def _rebound(self, name: cst.Name) -> bool:
        """`open` is the builtin unless the file binds the name (an import, a def)."""
        return bool(self.model.names.bindings_of(name)) if name in self.model.names.uses else False

    def _message(self, call: cst.Call, what: str) -> str:
        return (f"`{code_of(call, 60)}` writes a {what} on every rank of a distributed run: N processes write the "
                f"same path at once (a torn or corrupt file, N times the I/O); write it on global rank 0 only "
                f"(`if dist.get_rank() == 0:`, `accelerator.is_main_process`) and `dist.barrier()` before any rank reads it")

    def _fix(self, call: cst.Call) -> Fix | None:
        line = self.model.flows.parent(self.model.flows.parent(call))
        if type(line) is not cst.SimpleStatementLine or len(line.body) != 1 \
                or type(line.body[0]) is not cst.Expr or line.body[0].value is not call:
            return None  # `with open(...)`, an assignment: the guarded block would change what later lines see
        test, imports = self._guard_test(call)
        guarded = cst.If(test=cst.parse_expression(test), body=cst.IndentedBlock(body=[line.with_changes(leading_lines=())]),
                         leading_lines=line.leading_lines)
        return Fix("unsafe", f"write on global rank 0 only (`if {test}:`; unsafe: the other ranks no longer write, "
                   "a reader on another rank must wait at a barrier)", {line: guarded},
                   imports=imports)

    def _guard_test(self, write: cst.Call) -> tuple[str, tuple[str, ...]]:
        """`<accelerator>.is_main_process` when an `Accelerator` is held in a name the write sees (built in the same
        function, or at module level); the global rank from torch otherwise."""
        flows = self.model.flows
        for call in flows.calls():
            if self.model.names.qualify(call.func) in ("accelerate.Accelerator", "accelerate.accelerator.Accelerator"):
                holder = self.model.distributed.pipeline.holder(call)
                where = flows.enclosing_function(call)
                if holder is not None and "." not in holder and where in (None, flows.enclosing_function(write)):
                    return f"{holder}.is_main_process", ()
        torch, imports = torch_spelling(self.model.imports)
        return f"not {torch}.distributed.is_initialized() or {torch}.distributed.get_rank() == 0", imports
