"""The model part `objective_targets`: which tensors a backpropagated hand-written objective compares with a
model's output by arithmetic alone."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _compared(source: str, names: set[str]) -> str | None:
    model = FileModel(("objective_targets", "gradients"))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    function = next(node for node in module.body if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == "fit")
    calls = model.gradients.of(function).calls
    site = model.objective_targets.compared(names, calls)
    return cst.Module(body=[]).code_for_node(site) if site is not None else None


def test_inline_squared_error_compares_the_target_with_the_output():
    assert _compared("""
        def fit(net, x, t):
            loss = ((net(x) - t) ** 2).mean()
            loss.backward()
    """, {"t"}) == "((net(x) - t) ** 2).mean()"


def test_a_function_of_the_file_returning_arithmetic_of_its_parameters_is_followed():
    assert _compared("""
        import torch

        def nll(obs, p):
            return -(obs * torch.log(p)).mean()

        def fit(net, x, obs):
            loss = nll(obs, torch.sigmoid(net(x)))
            loss.backward()
    """, {"obs"}) == "nll(obs, torch.sigmoid(net(x)))"


def test_a_tensor_fed_to_the_model_is_not_compared():
    assert _compared("""
        def fit(net, x, t):
            loss = ((net(x) - t) ** 2).mean()
            loss.backward()
    """, {"x"}) is None


def test_no_model_output_means_no_comparison():
    assert _compared("""
        def fit(x, w, t):
            loss = ((x * w - t) ** 2).mean()
            loss.backward()
    """, {"t"}) is None


def test_a_function_that_hands_its_parameter_to_a_callable_is_not_arithmetic():
    assert _compared("""
        def score(obs, p, judge):
            return judge(obs) * p

        def fit(net, x, obs, judge):
            loss = score(obs, net(x), judge).mean()
            loss.backward()
    """, {"obs"}) is None
