"""The model's `modes` part: train/eval switches, the region an eval switch governs, and what runs there."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _modes(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("modes",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return module, model.modes


def test_switches_regions_and_forwards():
    module, modes = _modes(
        """
        import torch

        def fit(model, train_loader, val_loader, opt):
            model.train()
            for x, y in train_loader:
                model(x).sum().backward()
                opt.step()
            model.eval()
            total = 0.0
            for x, y in val_loader:
                total += model(x).sum().item()
            with torch.no_grad():
                once = model(x)
            model.train(False)
            model.train(mode)
            model.train()
            print(total)
        """
    )
    kinds = [(s.receiver, s.to_eval, s.passed_mode) for s in modes.switches]
    assert kinds == [
        ("model", False, False), ("model", True, False), ("model", True, False), ("model", False, True),
        ("model", False, False),
    ]
    evaluation = modes.switches[1]
    region = modes.region(evaluation)
    # `model.train(False)` is another eval switch; the region stops at `model.train(mode)`
    assert [module.code_for_node(statement).strip().splitlines()[0] for statement in region] == [
        "total = 0.0", "for x, y in val_loader:", "with torch.no_grad():", "model.train(False)",
    ]
    facts = modes.scan(region, "model")
    assert [grad_on for _, grad_on in facts.forwards] == [True, False]
    assert len(facts.repeated) == 1 and not facts.backward
    function = evaluation.function
    assert modes.mode_before("model", function, evaluation.order) == "train"
    assert modes.mode_before("model", function, modes.switches[2].order) == "eval"


def test_a_helper_receiver_maps_to_the_callers_argument():
    module, modes = _modes(
        """
        def evaluate(net, loader):
            net.eval()
            return [net(x) for x in loader]

        def fit(model, loader):
            evaluate(model, loader)
            evaluate(loader=loader, net=model.encoder)
        """
    )
    helper = modes.switches[0].function
    calls = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "evaluate":
                calls.append(node)

    module.visit(_Calls())
    assert [modes.caller_spelling(call, helper, "net") for call in calls] == ["model", "model.encoder"]


def test_a_switch_anywhere_in_a_chain_of_module_methods_is_the_chains_start():
    module, modes = _modes(
        """
        def save(net, dev, path):
            net.eval().cpu()
            write(net, path)
            net.to(dev).train()
            net.half().cuda().eval()
            build().eval()
        """
    )
    assert [(s.receiver, s.to_eval) for s in modes.switches] == [("net", True), ("net", False), ("net", True)]
    line, _ = modes.statement_of(modes.switches[0])
    assert module.code_for_node(line).strip() == "net.eval().cpu()"
    # the region of the first eval stops at the chained switch back
    assert [module.code_for_node(s).strip() for s in modes.region(modes.switches[0])] == ["write(net, path)"]


def test_a_rebinding_of_the_receiver_ends_its_eval_region():
    module, modes = _modes(
        """
        import torch

        model = torch.load("a.pt")
        model.eval()
        model = model.to("cuda")
        scores = [model(x) for x in loader]
        model.encoder = Encoder()
        model = Net()
        fresh = [model(x) for x in loader]

        class Holder:
            def run(self, loader):
                self.net.eval()
                def later():
                    self.net = Net()
                outs = [self.net(x) for x in loader]
                self.net, other = build(), None
                print(outs)
        """
    )
    first, method = modes.switches
    lines = [module.code_for_node(statement).strip().splitlines()[0] for statement in modes.region(first)]
    # moved (the same module), a submodule replaced: still eval; `model = Net()` is another object
    assert lines == ['model = model.to("cuda")', "scores = [model(x) for x in loader]", "model.encoder = Encoder()"]
    lines = [module.code_for_node(statement).strip().splitlines()[0] for statement in modes.region(method)]
    # a nested function's assignment runs later, elsewhere; the unpacking rebinds `self.net`
    assert lines == ["def later():", "outs = [self.net(x) for x in loader]"]


def test_the_mode_before_a_point_is_unknown_once_the_receiver_is_rebound():
    module, modes = _modes(
        """
        def fit(model, loader):
            model.train()
            model = model.cuda()
            step(model)
            model = reload("best.pt")
            validate(model)
        """
    )
    train, = modes.switches
    orders = sorted(rebinding.order for rebinding in modes.rebindings)
    assert modes.mode_before("model", train.function, orders[1] - 1) == "train"
    assert modes.mode_before("model", train.function, orders[1] + 1) is None
    assert modes.rebound_between("model", train.function, train.order, orders[1] + 1)
    assert not modes.rebound_between("model", train.function, train.order, orders[0] + 1)


def test_forwards_in_functions_of_the_file_the_region_calls():
    module, modes = _modes(
        """
        import torch

        class Trainer:
            def shared_forward(self, batch):
                return self.model(batch)

            def validation_step(self, batch):
                return self.shared_forward(batch).item()

            @torch.no_grad()
            def quiet_step(self, batch):
                return self.shared_forward(batch)

            def adapt_step(self, batch):
                self.shared_forward(batch).backward()

            def unrelated(self, batch):
                return self.other(batch)

            def fit(self, batches):
                self.model.eval()
                for batch in batches:
                    self.validation_step(batch)
                    self.quiet_step(batch)
                    self.adapt_step(batch)
                    self.unrelated(batch)
                    evaluate(self.model, batch)

        def evaluate(net, batch):
            return net(batch)
        """
    )
    switch = next(s for s in modes.switches if s.to_eval)
    facts = modes.scan(modes.region(switch), switch.receiver)
    reached = [(module.code_for_node(call), grad_on) for call, grad_on in facts.forwards]
    # two calls deep, reported at the region's call; a no_grad method runs it with autograd off; a
    # helper that differentiates is no evaluation; a method that never reaches `self.model` adds nothing
    assert reached == [
        ("self.validation_step(batch)", True), ("self.quiet_step(batch)", False), ("evaluate(self.model, batch)", True),
    ]
    assert not facts.backward
