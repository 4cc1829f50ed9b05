"""The model's `distributed` part: whether a file runs as one of several processes, which tests hold on
global rank 0 only and which code only rank 0 runs, and which loaders a framework shards (SF501-SF503)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str):
    model = FileModel(("distributed",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def _call_named(model, name: str) -> cst.Call:
    return next(call for call in model.flows.calls()
                if isinstance(call.func, (cst.Name, cst.Attribute))
                and (call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value) == name)


@pytest.mark.parametrize("setup", [
    "import torch.distributed as d\nd.init_process_group('nccl')",
    "from torch.nn.parallel import DistributedDataParallel as W\nm = W(net)",
    "import os\nrank = int(os.environ['LOCAL_RANK'])",
    "import os\nrank = int(os.getenv('RANK', 0))",
    "from accelerate import Accelerator\nacc = Accelerator()",
    "from torch.distributed.fsdp import fully_shard\nfully_shard(net)",
])
def test_a_process_group_wrapper_launcher_or_torchrun_variable_marks_a_distributed_file(setup):
    assert _model(setup).distributed.evidence() is not None


@pytest.mark.parametrize("setup", [
    "import os\nhome = os.environ['HOME']",
    "import torch\nnet = torch.nn.DataParallel(net)",
    "def init_process_group(x):\n    pass\ninit_process_group('nccl')",
])
def test_a_single_process_file_has_no_evidence(setup):
    assert _model(setup).distributed.evidence() is None


@pytest.mark.parametrize("guard, guarded", [
    ("if dist.get_rank() == 0:", True),
    ("if 0 == dist.get_rank():", True),
    ("if not rank:", True),
    ("if rank != 0:", False),
    ("if accelerator.is_main_process:", True),
    ("if trainer.is_global_zero:", True),
    ("if is_main():", True),
    ("if master:", True),
    ("if not dist.is_initialized() or dist.get_rank() == 0:", True),
    ("if rank == 1:", False),
    ("if epoch == 0:", False),
    ("if step % 100 == 0:", False),
])
def test_the_save_is_guarded_only_under_a_rank_zero_test(guard, guarded):
    model = _model(f"""
        import os
        import torch
        import torch.distributed as dist

        def is_main():
            return dist.get_rank() == 0

        def main(accelerator, trainer, epoch, step):
            rank = int(os.environ["RANK"])
            master = rank == 0
            {guard}
                torch.save(1, "x.pt")
        """)
    assert model.distributed.rank_guarded(_call_named(model, "save")) is guarded


def test_an_early_return_of_the_other_ranks_and_a_decorator_guard_what_follows():
    model = _model("""
        import torch
        import torch.distributed as dist
        from lightning.pytorch.utilities import rank_zero_only

        def export(m):
            if dist.get_rank() > 0:
                return
            torch.save(m, "a.pt")

        @rank_zero_only
        def dump(m):
            torch.save(m, "b.pt")
        """)
    saves = [call for call in model.flows.calls() if isinstance(call.func, cst.Attribute) and call.func.attr.value == "save"]
    assert [model.distributed.rank_guarded(call) for call in saves] == [True, True]


def test_a_function_is_guarded_when_every_caller_guards_it_and_not_when_one_does_not():
    source = """
        import torch
        import torch.distributed as dist

        def write(m):
            torch.save(m, "a.pt")

        def main(m):
            if dist.get_rank() == 0:
                write(m)
            {extra}
        """
    guarded = _model(source.format(extra="pass"))
    assert guarded.distributed.rank_guarded(_call_named(guarded, "save"))
    unguarded = _model(source.format(extra="write(m)"))
    assert not unguarded.distributed.rank_guarded(_call_named(unguarded, "save"))


def test_a_path_built_from_the_rank_mentions_it():
    model = _model("""
        import torch.distributed as dist

        def main(out):
            r = dist.get_rank()
            a = f"{out}/shard_{r}.pt"
            b = f"{out}/shard.pt"
        """)
    values = {b.name: b.bound_value for b in model.names.all_bindings() if b.name in ("a", "b")}
    assert model.distributed.mentions_rank(values["a"]) and not model.distributed.mentions_rank(values["b"])


def test_loaders_handed_to_prepare_even_in_a_tuple_are_handled():
    model = _model("""
        from accelerate import Accelerator
        from torch.utils.data import DataLoader

        acc = Accelerator()
        train = DataLoader(ds, shuffle=True)
        val = DataLoader(ds)
        model, opt, train = acc.prepare(model, opt, train)
        """)
    assert model.distributed.handled_loaders() >= {"train"} and "val" not in model.distributed.handled_loaders()


def test_the_pipeline_tells_a_distributed_sampler_from_a_single_process_one_and_an_unknown_one():
    model = _model("""
        from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler
        from helpers import make_sampler

        a = DataLoader(ds, sampler=DistributedSampler(ds))
        b = DataLoader(ds, sampler=RandomSampler(ds))
        c = DataLoader(ds, batch_sampler=BatchSampler(RandomSampler(ds), 4, False))
        d = DataLoader(ds, sampler=make_sampler(ds))
        e = DataLoader(ds, shuffle=True)
        """)
    pipeline = model.distributed.pipeline
    kinds = {loader.holder: loader.sampler and pipeline.sampler_kind(loader.sampler) for loader in pipeline.loaders()}
    assert kinds == {"a": "distributed", "b": "plain", "c": "plain", "d": "unknown", "e": None}


def test_a_loader_is_held_where_the_callers_of_a_function_returning_it_keep_it():
    model = _model("""
        from torch.utils.data import DataLoader

        def make_loaders(train_set, val_set):
            train_dl = DataLoader(train_set, shuffle=True)
            return train_dl, DataLoader(val_set)

        def make_one(ds):
            return DataLoader(ds)

        device, single = "cpu", DataLoader(None)
        a, b = make_loaders(x, y)
        c = make_one(z)
    """)
    pipeline = model.distributed.pipeline
    held = [pipeline.holders(loader) for loader in pipeline.loaders()]
    assert held == [["train_dl", "a"], ["b"], ["c"], ["single"]]
