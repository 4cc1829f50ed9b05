"""The model's `uses` part: what later code needs of a held value, and whether it is reset at every step."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.flow.later_uses import GRAPH, NUMBER, TENSOR, UNSEEN, strongest
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> tuple[cst.Module, FileModel]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("uses",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return module, model


def _site(module: cst.Module, text: str) -> cst.CSTNode:
    """The first statement expression (augmented assignment, assignment or call) spelled `text`."""
    found: list[cst.CSTNode] = []

    class _Finder(cst.CSTVisitor):
        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if module.code_for_node(node).strip() == text:
                found.append(node)

        def visit_Assign(self, node: cst.Assign) -> None:
            if module.code_for_node(node).strip() == text:
                found.append(node)

        def visit_Call(self, node: cst.Call) -> None:
            if module.code_for_node(node).strip() == text:
                found.append(node)

    module.visit(_Finder())
    return found[0]


def _holder(site: cst.CSTNode) -> cst.BaseExpression:
    if isinstance(site, cst.AugAssign):
        return site.target
    if isinstance(site, cst.Assign):
        return site.targets[0].target
    assert isinstance(site, cst.Call) and isinstance(site.func, cst.Attribute)
    return site.func.value


def _needs(source: str, text: str, function: str = "train") -> list[str]:
    module, model = _model(source)
    site = _site(module, text)
    definition = next(n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value == function)
    root = _holder(site)
    root = root.value if isinstance(root, cst.Subscript) else root
    after = model.names.uses[root].order if isinstance(root, cst.Name) else 0
    return [read.need for read in model.uses.reads(_holder(site), site, after, definition, None)]


def _window(source: str, text: str, function: str = "train") -> bool:
    module, model = _model(source)
    site = _site(module, text)
    definition = next(n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value == function)
    return model.uses.reset_every_step(_holder(site), site, definition)


LOOP = """
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    import logging

    def train(model, loader, opt):
        running_loss = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running_loss += loss
        {tail}
"""


def _tail(tail: str) -> list[str]:
    return _needs(LOOP.replace("{tail}", tail), "running_loss += loss")


def test_numbers_suffice_for_arithmetic_comparisons_and_formatting_with_a_spec():
    assert _tail("print(f'{running_loss / len(loader):.3f}')") == [NUMBER]
    assert _tail("mean = running_loss / len(loader)\n        print(f'{mean:.3f}')") == [NUMBER]
    assert _tail("if running_loss > 10:\n            print('high')") == [NUMBER]
    assert _tail("history = [float(running_loss)]") == [NUMBER]


def test_a_builtin_name_the_file_redefines_is_the_files_function():
    source = LOOP.replace("{tail}", "return float(sum(running_loss))") + "\n    def sum(value):\n        value.backward()\n"
    assert _needs(source, "running_loss += loss") != [NUMBER]


def test_the_text_of_a_tensor_shows_its_graph():
    assert _tail("print(running_loss / len(loader))") == [GRAPH]
    assert _tail("print(f'{running_loss}')") == [GRAPH]
    assert _tail("logging.info('loss %s', running_loss)") == [GRAPH]


def test_state_on_self_or_a_module_global_is_readable_by_unseen_code():
    source = """
        import torch.nn.functional as F

        class Trainer:
            def __init__(self, model, opt):
                self.model, self.opt, self.history = model, opt, []

            def step(self, x, y):
                loss = F.mse_loss(self.model(x), y)
                loss.backward()
                self.opt.step()
                self.history.append(loss)
    """
    module, model = _model(source)
    site = _site(module, "self.history.append(loss)")
    cls = next(n for n in module.body if isinstance(n, cst.ClassDef))
    method = cls.body.body[1]
    assert [r.need for r in model.uses.reads(_holder(site), site, 0, method, cls)] == [UNSEEN]


def test_tensor_methods_and_torch_functions_need_a_tensor():
    assert _tail("print(running_loss.item())") == [TENSOR]
    assert _tail("dist.all_reduce(running_loss)") == [TENSOR]
    assert _tail("value = torch.stack([running_loss]).mean().item()") == [TENSOR]


def test_a_return_to_no_caller_of_the_file_is_unseen_code():
    assert _tail("return running_loss / len(loader)") == [UNSEEN]
    assert _tail("return running_loss.item()") == [TENSOR]
    assert _tail("report(running_loss)") == [UNSEEN]


def test_a_return_to_a_caller_of_the_file_is_followed():
    source = LOOP.replace("{tail}", "return running_loss") + """
    def main(model, loader, opt):
        total = train(model, loader, opt)
        print(f"{total:.4f}")
"""
    assert _needs(source, "running_loss += loss") == [NUMBER]


def test_differentiating_or_reading_autograd_state_needs_the_graph():
    assert _tail("running_loss.backward()") == [GRAPH]
    assert _tail("print(running_loss.requires_grad)") == [GRAPH]
    assert strongest([]) == NUMBER


def test_reads_after_a_rebinding_see_another_value():
    source = LOOP.replace("{tail}", "running_loss = torch.zeros(())\n        running_loss.backward()")
    assert _needs(source, "running_loss += loss") == []


def test_a_read_earlier_in_the_loop_runs_on_the_next_pass():
    source = """
        import torch.distributed as dist
        import torch.nn.functional as F

        def train(model, loader, opt):
            total = 0.0
            for x, y in loader:
                dist.all_reduce(total)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                total += loss
    """
    assert _needs(source, "total += loss") == [TENSOR]


def test_a_list_holder_read_by_a_torch_function_and_by_bookkeeping():
    source = """
        import torch
        import torch.nn.functional as F

        def train(model, loader, opt):
            losses = []
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss)
            print(len(losses))
            return torch.stack(losses).mean().item()
    """
    assert sorted(_needs(source, "losses.append(loss)")) == [NUMBER, TENSOR]


WINDOW = """
    import torch
    import torch.nn.functional as F

    def train(model, loader, optimizer, accum, in_backward):
        running_loss = 0
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            running_loss += loss
            loss.backward()
            if (step + 1) % accum == 0:
                if not in_backward:
                    optimizer.step()
                    optimizer.zero_grad()
                print(running_loss.item())
                {reset}
"""


def test_a_reset_in_the_branch_of_every_optimizer_step_is_a_window():
    for reset in ("running_loss = 0", "running_loss.zero_()", "running_loss -= running_loss"):
        assert _window(WINDOW.replace("{reset}", reset), "running_loss += loss"), reset


def test_no_reset_or_a_reset_that_reads_the_sum_is_no_window():
    assert not _window(WINDOW.replace("{reset}", "pass"), "running_loss += loss")
    assert not _window(WINDOW.replace("{reset}", "running_loss = running_loss * 0.9"), "running_loss += loss")


def test_a_logging_interval_wider_than_the_step_is_no_window():
    source = """
        import torch.nn.functional as F

        def train(model, loader, optimizer):
            running_loss = 0.0
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running_loss += loss
                if i % 2000 == 1999:
                    print(running_loss / 2000)
                    running_loss = 0.0
    """
    assert not _window(source, "running_loss += loss")


def test_an_epoch_reset_around_steps_of_an_inner_loop_is_no_window():
    source = """
        import torch.nn.functional as F

        def train(model, loader, optimizer, scheduler, epochs):
            for epoch in range(epochs):
                total = 0.0
                for x, y in loader:
                    loss = F.cross_entropy(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    total += loss
                scheduler.step()
                print(total)
    """
    assert not _window(source, "total += loss")


def test_a_reset_before_the_micro_batches_of_each_step_is_a_window():
    source = """
        import torch.nn.functional as F

        def train(model, batches, optimizer, steps, accum):
            for step in range(steps):
                loss_accum = 0.0
                for micro in range(accum):
                    x, y = next(batches)
                    loss = F.cross_entropy(model(x), y) / accum
                    loss_accum += loss
                    loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                print(step, loss_accum.item())
    """
    assert _window(source, "loss_accum += loss")


def test_runs_whenever_compares_the_branches_inside_the_shared_loop():
    source = """
        def train(model, loader, opt, accum, with_backward):
            total = 0.0
            for i, (x, y) in enumerate(loader):
                loss = model(x, y)
                if with_backward:
                    loss.backward()
                total += loss
                if (i + 1) % accum == 0:
                    opt.step()
                    if total > 0:
                        print(total)
    """
    module, model = _model(source)
    site, backward = _site(module, "total += loss"), _site(module, "loss.backward()")
    step, shown = _site(module, "opt.step()"), _site(module, "print(total)")
    uses = model.uses
    assert uses.runs_whenever(site, backward) and not uses.runs_whenever(backward, site)
    assert uses.runs_whenever(step, shown) and not uses.runs_whenever(shown, step)
