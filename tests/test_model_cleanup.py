"""The model's device-memory and gate facts: flushes, cleanup blocks, phase boundaries, gate conditions."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor
from stabfix.model.training import gates


def _sites(source: str):
    """The model of the source and, for every call, (call, frames, place) as recorded in the traversal."""
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(["steps", "memory"])
    sites = []

    class Record(cst.BatchableCSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            sites.append((node, model.steps.frames(), model.steps.place()))

    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor([*model.visitors(), Record()])])
    return model, sites


def _flushes(model, sites):
    return [site for site in sites if model.memory.is_flush(site[0])]


def test_a_flush_through_a_plain_alias_and_through_a_wrapper_of_the_file():
    model, sites = _sites(
        """
        import gc
        import torch as t

        def free():
            gc.collect()
            t.cuda.empty_cache()

        def train(loader):
            flush = t.cuda.empty_cache
            for batch in loader:
                flush()
                free()
                gc.collect()
        """
    )
    spelled = [cst.Module(body=[]).code_for_node(call.func) for call, _, _ in _flushes(model, sites)]
    assert spelled == ["t.cuda.empty_cache", "flush", "free"]
    free_call = next(call for call, _, _ in sites if cst.Module(body=[]).code_for_node(call.func) == "free")
    assert model.memory.flush_wrapper(free_call) is not None
    assert not model.memory.is_flush(free_call, wrappers=False)


def test_a_model_moved_at_the_end_of_a_with_block_is_a_phase_boundary():
    model, sites = _sites(
        """
        import torch

        def step(policy, ref, x):
            with torch.no_grad():
                ref.to("cuda")
                y = ref(x)
                ref.to("cpu")
            torch.cuda.empty_cache()
            with torch.no_grad():
                y = policy(x)
            torch.cuda.empty_cache()
        """
    )
    boundaries = [model.memory.at_phase_boundary(place) for _, _, place in _flushes(model, sites)]
    assert boundaries == [True, False]


def test_memory_thresholds_are_erased_from_gate_conditions_but_intervals_are_not():
    model, sites = _sites(
        """
        import torch

        for step, batch in enumerate(loader):
            loss = model(batch)
            loss.backward()
            optimizer.step()
            if torch.cuda.memory_allocated() > 8e9:
                torch.cuda.empty_cache()
            if torch.cuda.memory_reserved() > 12e9:
                torch.cuda.empty_cache()
            if step % 100 == 0:
                torch.cuda.empty_cache()
            if step % 50 == 0:
                torch.cuda.empty_cache()
        """
    )
    paths = [model.steps.step_path(frames) for _, frames, _ in _flushes(model, sites)]
    keys = [gates.conditions(model.steps, path) for path in paths]
    assert keys[0] == keys[1]
    assert keys[2] != keys[3] and keys[2] != keys[0]
    call, _, place = _flushes(model, sites)[0]
    block = model.memory.cleanup_block(place, call, paths[0].scope.node)
    assert block is not None and len(block.statements) == 1 and isinstance(block.statements[0], cst.If)
