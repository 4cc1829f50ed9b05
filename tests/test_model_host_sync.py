"""The `syncs` and `generation` model parts, and the gates SF202/SF204 add: what makes the host wait,
what generates, and whether what generation makes feeds the update."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.domain.host_sync import is_loop_item
from stabfix.model.source.traversal import MergedVisitor
from stabfix.model.training import gates


def _model(source: str, *needs: str) -> tuple[FileModel, cst.Module]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model, module


def _nodes(module: cst.CSTNode, kind: type) -> list:
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _kinds(source: str) -> dict[str, str]:
    model, module = _model(source, "syncs")
    result = {}
    for call in _nodes(module, cst.Call):
        sync = model.syncs.sync_of(call)
        if sync is not None:
            result[_code(call)] = sync.kind
    for test in (node.test for node in _nodes(module, cst.If)):
        sync = model.syncs.truth_test_sync(test)
        if sync is not None:
            result[_code(test)] = sync.kind
    return result


def test_barriers_and_memory_reports_through_aliases():
    kinds = _kinds(
        """
        import torch as t
        from torch.cuda import synchronize as sync
        t.cuda.synchronize()
        sync()
        t.cuda.current_stream().synchronize()
        print(t.cuda.memory_summary())
        used = t.cuda.memory_allocated()
        """
    )
    assert kinds["t.cuda.synchronize()"] == "barrier"
    assert kinds["sync()"] == "barrier"
    assert kinds["t.cuda.current_stream().synchronize()"] == "barrier"
    assert kinds["t.cuda.memory_summary()"] == "snapshot"
    assert "t.cuda.memory_allocated()" not in kinds  # a host-side counter, no sync


def test_health_checks_and_reads_of_device_tensors():
    kinds = _kinds(
        """
        import torch
        loss = torch.nn.functional.mse_loss(model(x), y)
        bad = torch.isnan(loss).any().item()
        value = float(loss)
        if not torch.isfinite(loss).all():
            pass
        if loss > 10:
            pass
        """
    )
    assert kinds["torch.isnan(loss).any().item()"] == "check"
    assert kinds["float(loss)"] == "read"
    assert kinds["not torch.isfinite(loss).all()"] == "check"
    assert kinds["loss > 10"] == "check"


def test_host_values_modules_and_python_numbers_are_not_syncs():
    kinds = _kinds(
        """
        import numpy as np
        import torch
        model = torch.nn.Linear(2, 2)
        model.cpu()
        lr = np.float64(0.1).item()
        cpu_loss = model(x).detach().cpu()
        cpu_loss.item()
        n = float(len(items))
        if step > 10:
            pass
        """
    )
    assert "model.cpu()" not in kinds
    assert "np.float64(0.1).item()" not in kinds
    assert "cpu_loss.item()" not in kinds
    assert "float(len(items))" not in kinds
    assert "step > 10" not in kinds
    assert kinds["model(x).detach().cpu()"] == "read"


def test_a_loop_item_is_read_as_it_comes():
    module = cst.parse_module("for k, v in logs.items():\n    v.item()\n    p.grad.norm().item()\n")
    loop = module.body[0]
    v = cst.parse_expression("v")
    assert is_loop_item(v, loop)
    assert is_loop_item(cst.parse_expression("v['loss']"), loop)
    assert not is_loop_item(cst.parse_expression("p.grad.norm()"), loop)


def test_module_constant_flags_are_fixed_and_settings_are_not():
    model, module = _model(
        """
        DEBUG = True
        QUIET = False
        if not DEBUG:
            pass
        if DEBUG and not QUIET:
            pass
        if args.debug:
            pass
        """,
        "names",
    )
    tests = [node.test for node in _nodes(module, cst.If)]
    assert [gates.constant_truth(model.names, test) for test in tests] == [False, True, None]


def _generation(source: str):
    model, module = _model(source, "generation", "steps")
    return model, module


def test_generation_calls_by_receiver_settings_and_same_file_helpers():
    model, module = _generation(
        """
        import torch
        model = torch.nn.Linear(2, 2)

        def greedy(net, x):
            out = []
            for _ in range(8):
                tok = net(x).argmax(-1)
                out.append(tok)
            return out

        a = model.generate(ids)
        b = self.decoder.decode_surface(h, max_length=8)
        c = greedy(model, ids)
        d = tokenizer(texts, max_length=128)
        e = noise_source.generate(4)
        """
    )
    calls = {_code(call.func): call for call in _nodes(module, cst.Call)}
    generation = model.generation
    assert generation.generation_call(calls["model.generate"]) == "generates"
    assert generation.generation_call(calls["self.decoder.decode_surface"]).startswith("decodes with")
    assert generation.generation_call(calls["greedy"]) == "decodes token by token"
    assert generation.generation_call(calls["tokenizer"]) is None
    assert generation.generation_call(calls["noise_source.generate"]) is None


def test_generated_tokens_that_reach_the_backward_feed_training():
    model, module = _generation(
        """
        def rollout_step(policy, prompts, optimizer):
            responses = policy.generate(prompts, max_new_tokens=8)
            scores = reward_model(responses)
            loss = -(policy.log_probs(responses) * scores).mean()
            loss.backward()

        def monitor_step(model, batch, optimizer):
            loss = model(**batch).loss
            loss.backward()
            sample = model.generate(batch["input_ids"], max_new_tokens=8)
            print(tokenizer.batch_decode(sample))
        """
    )
    functions = {f.name.value: f for f in _nodes(module, cst.FunctionDef)}
    for name, feeds in (("rollout_step", True), ("monitor_step", False)):
        function = functions[name]
        call = next(c for c in _nodes(function, cst.Call) if _code(c.func).endswith(".generate"))
        statement = next(s for s in _nodes(function, cst.SimpleStatementLine) if call in _nodes(s, cst.Call))
        assert model.generation.feeds_training(call, statement, function) is feeds, name


def test_an_infinity_comparison_and_abs_of_a_device_tensor_are_checks():
    kinds = _kinds(
        """
        import math
        import torch
        loss = torch.nn.functional.mse_loss(model(x), y)
        if (loss.abs() == torch.inf).any():
            pass
        if (loss != -float("inf")).all():
            pass
        if (loss == math.inf).any():
            pass
        if abs(loss - previous) < tol:
            pass
        current = loss.item()
        if abs(current - previous) < tol:
            pass
        if (scores == threshold).any():
            pass
        """
    )
    assert kinds["(loss.abs() == torch.inf).any()"] == "check"
    assert kinds['(loss != -float("inf")).all()'] == "check"
    assert kinds["(loss == math.inf).any()"] == "check"
    assert kinds["abs(loss - previous) < tol"] == "check"
    # near misses: a host float, and a comparison with something that is not infinity on an unknown value
    assert "abs(current - previous) < tol" not in kinds
    assert "(scores == threshold).any()" not in kinds
