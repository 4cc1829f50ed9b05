"""The torch-operation table (`model/calls/torch_ops.py`): which operations keep a value's requires-grad and
autograd history, and the parts that follow values through it."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls import torch_ops
from stabfix.model.flow.gradient_use import holders, plain_aliases, target_roots
from stabfix.model.flow.history import LOSS, MODEL_OUTPUT
from stabfix.model.flow.tensor_identity import strip_value_wrappers
from stabfix.model.source.traversal import MergedVisitor

_IMPORTED = {
    "torch": "torch",
    "Variable": "torch.autograd.Variable",
    "torch.flatten": "torch.flatten",
    "torch.argmax": "torch.argmax",
    "torch.long": "torch.long",
    "torch.tensor": "torch.tensor",
}


def _qualify(expr: cst.BaseExpression):
    """What `import torch; from torch.autograd import Variable` makes of a name or attribute chain."""
    code = cst.Module(body=[]).code_for_node(expr)
    return _IMPORTED.get(code)


def _code(expr) -> str | None:
    return None if expr is None else cst.Module(body=[]).code_for_node(expr)


@pytest.mark.parametrize(
    "expr, operand",
    [
        ("y.cuda()", "y"),
        ("y.to(device)", "y"),
        ("y.float().half().double()", "y"),
        ("y.type(torch.FloatTensor)", "y"),
        ("y.view(-1, 1)", "y"),
        ("y.resize(4, 1)", "y"),
        ("y.reshape(2, -1).squeeze(0).unsqueeze(1).permute(1, 0).transpose(0, 1).contiguous()", "y"),
        ("y.flatten().expand(3, 4).T", "y"),
        ("y[:, 0]", "y"),
        ("y.clone()", "y"),
        ("Variable(y).cuda()", "y"),
        ("torch.flatten(y, 1)", "y"),
        ("Variable(y, requires_grad=True).cuda()", "Variable(y, requires_grad=True)"),
        ("torch.tensor(y, requires_grad=True).to(device).view(-1)", "torch.tensor(y, requires_grad=True)"),
        ("y.requires_grad_().float()", "y.requires_grad_()"),
    ],
)
def test_moves_casts_views_indexing_and_wrappers_keep_requires_grad(expr, operand):
    assert _code(torch_ops.grad_operand(cst.parse_expression(expr), _qualify)) == operand


@pytest.mark.parametrize(
    "expr",
    [
        "y.long()", "y.int()", "y.bool()", "y.argmax(1)", "torch.argmax(y, dim=1)", "y > 0", "y == z",
        "y.to(torch.long)", "y.type(torch.LongTensor)", "y.detach().cuda()", "y.data.view(-1)", "y.item()",
        "y.numpy()", "y.tolist()", "y.cuda().detach()", "y.shape",
        "torch.tensor(y, requires_grad=True).long()",
    ],
)
def test_integer_results_cuts_and_python_data_drop_requires_grad(expr):
    assert torch_ops.grad_operand(cst.parse_expression(expr), _qualify) is None


@pytest.mark.parametrize(
    "expr, operand",
    [("loss.view(1).float()", "loss"), ("loss.cpu()", "loss"), ("loss[0]", "loss"), ("loss.long()", None),
     ("loss.detach()", None), ("loss.data", None), ("loss.item()", None), ("loss.size(0)", None)],
)
def test_history_follows_the_same_table(expr, operand):
    assert _code(torch_ops.history_operand(cst.parse_expression(expr), _qualify)) == operand


def test_a_tuple_display_binds_each_element_to_the_name_it_is_unpacked_into():
    [statement] = cst.parse_module("x, (y, z) = Variable(a), (b.cuda(), c)\n").body[0].body
    pairs = {names: _code(value) for names, value in torch_ops.assigned(statement)}
    assert pairs[("x",)] == "Variable(a)"
    assert _code(torch_ops.unpacked(statement.value, (1, 0))) == "b.cuda()"
    assert ("y",) not in pairs  # a nested target is not a name


def test_the_parts_share_one_table_for_methods_that_keep_values():
    """The identity of tensors strips what the table says keeps the values, and stops at an integer cast."""
    for expr, stripped in [("x.detach().xpu().clone()", "x"), ("x.data", "x"), ("x.to(torch.long)", "x.to(torch.long)"),
                           ("x.type(torch.LongTensor)", "x.type(torch.LongTensor)")]:
        class _Imports:
            qualify = staticmethod(_qualify)

        assert _code(strip_value_wrappers(cst.parse_expression(expr), _Imports())[0]) == stripped


def _model(source: str, needs: tuple[str, ...]) -> tuple[cst.Module, FileModel]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=needs)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return module, model


def _loss_target(source: str) -> set[str]:
    module, model = _model(source, ("gradients",))
    [loss] = model.gradients.of(module).losses
    return target_roots(loss.target, model.imports)


@pytest.mark.parametrize(
    "target, roots",
    [("y.float()", {"y"}), ("y[:, 0].cuda()", {"y"}), ("y.long()", set()), ("y.detach()", set()),
     ("torch.argmax(y, dim=1)", set()), ("y.to(torch.long)", set())],
)
def test_a_loss_target_is_rooted_in_a_tensor_only_through_operations_that_keep_its_grad(target, roots):
    source = f"import torch\nimport torch.nn.functional as F\nloss = F.mse_loss(model(x), {target})\n"
    assert _loss_target(source) == roots


def test_aliases_of_a_marked_tensor_follow_moves_and_tuple_unpacking_in_later_statements():
    module, model = _model(
        """
        import torch
        from torch.autograd import Variable

        def step(a, b, device):
            x, y = Variable(a), Variable(b, requires_grad=True)
            x, gpu_y = x.cuda(), y.to(device)
            flat = gpu_y.view(-1)
            label = flat.long()
        """,
        ("gradients",),
    )
    function = module.body[2]
    bindings = model.gradients.bindings_in(function)
    assert plain_aliases(bindings, {"y"}, model.imports.qualify) == {"y", "gpu_y", "flat"}


def test_history_is_cut_by_integer_casts_and_kept_by_moves():
    module, model = _model(
        """
        import torch
        import torch.nn.functional as F

        def train(model, loader, opt, log, device):
            for x, y in loader:
                logits = model(x)
                loss = F.cross_entropy(logits, y)
                loss.backward()
                log.append(loss.view(1).to(device))
                log.append(logits.to(torch.long))
                log.append(torch.argsort(logits))
                log.append(logits.type(torch.LongTensor))
                log.append(loss.grad_fn)
        """,
        ("history",),
    )
    appended = {}

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "append":
                appended[module.code_for_node(node.args[0].value)] = node.args[0].value

    module.visit(_Finder())
    history = model.history
    assert history.origin(appended["loss.view(1).to(device)"]) == LOSS
    for cut in ("logits.to(torch.long)", "torch.argsort(logits)", "logits.type(torch.LongTensor)", "loss.grad_fn"):
        assert history.origin(appended[cut]) is None, cut
    assert MODEL_OUTPUT  # the other origin the part names


def test_values_see_an_accelerator_move_of_any_backend():
    module, model = _model("import torch\nb = torch.zeros(3)\nc = b.xpu()\nd = c.cpu()\n", ("values",))
    c, d = (statement.body[0].value for statement in module.body[2:4])
    assert model.values.value_of(c).placed
    assert model.values.value_of(d).host


def test_holders_of_a_marked_tensor_follow_moves_and_loop_targets_drawn_from_containers():
    module, model = _model(
        """
        import torch

        def step(critic, feats, y):
            t = torch.tensor(y, requires_grad=True)
            h = t.cuda()
            h = critic(h)
            marked = [f.requires_grad_() for f in feats]
            for layer, m in zip(critic.layers, marked):
                m = layer(m)
        """,
        ("gradients",),
    )
    bindings = model.gradients.bindings_in(module.body[1])
    assert holders(bindings, {"t"}, model.imports.qualify) == {"t", "h"}
    assert "m" in holders(bindings, {"marked"}, model.imports.qualify)
    assert "layer" not in holders(bindings, {"marked"}, model.imports.qualify)


def test_a_comprehension_holds_what_its_element_expression_is():
    assert _code(torch_ops.grad_operand(cst.parse_expression("[f.requires_grad_() for f in feats]"))) == "f.requires_grad_()"
    assert torch_ops.grad_operand(cst.parse_expression("[f.long() for f in feats]")) is None
