"""The model's `events` part: training events of a file, in source order, with their sites."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls.events import Backward, ClearGrad, Clip, Events, GradWrite, OptimizerBuilt, ParamUpdate, Step, Unscale


def _events(source: str) -> tuple[cst.Module, Events]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("events",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(model.visitors())
    assert model.events is not None
    return module, model.events


def _code(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module(body=[]).code_for_node(node)


def _training(events: Events) -> list[tuple[str, str]]:
    """(kind, code) of every event except plain calls, in order."""
    return [(event.kind, _code(event.node)) for event in events.events if event.kind != "call"]


def test_a_training_loop_in_source_order_with_its_loop():
    _, events = _events(
        """
        import torch
        from torch.nn.utils import clip_grad_norm_

        def train(model, loader, scaler):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            for batch in loader:
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(model(batch)).backward()
                scaler.unscale_(optimizer)
                clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
        """
    )
    assert [kind for kind, _ in _training(events)] == ["optimizer", "clear", "backward", "unscale", "clip", "step"]
    built, clear, backward, unscale, clip, step = [e for e in events.events if e.kind != "call"]
    assert isinstance(built, OptimizerBuilt) and built.class_name == "AdamW" and built.site.loops == ()
    (loop,) = step.site.loops
    assert all(event.site.loops == (loop,) for event in (clear, backward, unscale, clip, step))
    assert isinstance(clear, ClearGrad) and _code(clear.receiver) == "optimizer" and clear.how == "zero_grad"
    assert isinstance(backward, Backward) and _code(backward.loss) == "scaler.scale(model(batch))"
    assert isinstance(unscale, Unscale) and _code(unscale.scaler) == "scaler" and _code(unscale.optimizer) == "optimizer"
    assert isinstance(clip, Clip) and _code(clip.parameters) == "model.parameters()"
    # what may be stepped: the receiver or the argument (the optimizers part tells which is one)
    assert isinstance(step, Step) and [_code(c) for c in step.candidates] == ["scaler", "optimizer"]
    orders = [event.site.order for event in events.events]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert events.loop_site(loop).order < clear.site.order
    assert step.site.function is not None and step.site.function.name.value == "train"


def test_backward_forms_and_what_they_differentiate():
    _, events = _events(
        """
        import torch.autograd as ag

        def step(self, accelerator, loss, x):
            loss.backward()
            accelerator.backward(loss)
            self.manual_backward(loss)
            ag.grad(loss, x)
            ag.backward(loss)
        """
    )
    backwards = events.of_kind("backward")
    assert [_code(event.node) for event in backwards] == [
        "loss.backward()", "accelerator.backward(loss)", "self.manual_backward(loss)", "ag.grad(loss, x)", "ag.backward(loss)",
    ]  # one event per call: `ag.backward` is not also counted as a `.backward()` method
    assert all(_code(event.loss) == "loss" for event in backwards)  # type: ignore[attr-defined]


def test_gradient_clears_writes_and_in_place_updates():
    _, events = _events(
        """
        def probe(model, g, lr):
            for p in model.parameters():
                p.data.add_(p.grad, alpha=lr)
                p.sub_(lr * p.grad)
                p -= lr * p.grad
                p.data = p.data + lr * p.grad
                p.grad.copy_(g)
                p.grad = g
                p.grad = None
                p.grad.mul_(0.5)
        """
    )
    assert _training(events) == [
        ("update", "p.data.add_(p.grad, alpha=lr)"),
        ("update", "p.sub_(lr * p.grad)"),
        ("update", "p -= lr * p.grad"),
        ("update", "p.data = p.data + lr * p.grad"),
        ("grad_write", "p.grad.copy_(g)"),
        ("grad_write", "p.grad = g"),
        ("clear", "p.grad = None"),
    ]
    updates = [e for e in events.events if isinstance(e, ParamUpdate)]
    assert [(u.param, u.operation) for u in updates] == [("p", "add_"), ("p", "sub_"), ("p", "-="), ("p", "data=")]
    assert all(isinstance(e, (ParamUpdate, GradWrite, ClearGrad)) for e in events.events if e.kind != "call")


def test_updates_to_attribute_chains_lookups_out_and_foreach():
    _, events = _events(
        """
        import torch as T

        def probe(model, params, grads, name, lr, stats):
            model.head.weight.data += lr * model.head.weight.grad
            model.head.bias.data = model.head.bias.data - lr
            params[name].add_(grads[name])
            T.add(model.w.data, model.w.grad, alpha=lr, out=model.w.data)
            T.sub(params[0], lr, out=params[0])
            T._foreach_add_(params, grads, alpha=lr)
            T._foreach_sub_([a, b], grads)
            model.head.weight.grad.data.add_(lr)
            self.state[p]["e_w"].add_(lr)
            T.add(model.w, lr)
        """
    )
    updates = [e for e in events.events if isinstance(e, ParamUpdate)]
    assert [(u.param, u.operation, _code(u.tensor)) for u in updates] == [
        ("model.head.weight", "+=", "model.head.weight"),
        ("model.head.bias", "data=", "model.head.bias"),
        ("params[name]", "add_", "params[name]"),
        ("model.w", "out=add", "model.w"),
        ("params", "foreach_add_", "params"),
    ]  # not: an index by number, a list literal, a gradient, a nested lookup, arithmetic without out=


def test_optimizer_constructions_follow_import_aliases_and_skip_schedulers():
    _, events = _events(
        """
        import torch
        from torch.optim import SGD as Plain

        opt = Plain(params, lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        other = torch.optim.Adam(params)
        """
    )
    assert [(e.class_name, _code(e.node)) for e in events.of_kind("optimizer")] == [  # type: ignore[attr-defined]
        ("SGD", "Plain(params, lr=0.1)"), ("Adam", "torch.optim.Adam(params)"),
    ]


def test_branches_that_exclude_each_other_and_blocks_that_leave():
    _, events = _events(
        """
        def update(model, optimizer, flag, loader):
            if flag:
                optimizer.step()
            else:
                model.zero_grad()
            try:
                optimizer.step()
            except RuntimeError:
                model.zero_grad()
            for x in loader:
                if x is None:
                    optimizer.step()
                    continue
                model.zero_grad()
        """
    )
    (if_step, try_step, loop_step) = events.of_kind("step")
    (else_clear, except_clear, loop_clear) = events.of_kind("clear")
    assert if_step.site.never_both_run(else_clear.site)
    assert try_step.site.never_both_run(except_clear.site)
    assert not if_step.site.never_both_run(except_clear.site)
    assert loop_step.site.leaves_before(loop_clear.site)  # `continue` ends the step's block
    assert not if_step.site.leaves_before(except_clear.site)


def test_each_function_keeps_its_own_events_and_loops():
    _, events = _events(
        """
        def outer(model, optimizer, loader):
            for batch in loader:
                def closure():
                    model(batch).backward()
                optimizer.step(closure)
        """
    )
    outer_function = events.of_kind("step")[0].site.function
    (backward,) = events.of_kind("backward")
    assert backward.site.function is not outer_function and backward.site.loops == ()
    assert events.in_function(outer_function, "backward") == []
    assert [e.kind for e in events.in_function(backward.site.function, "backward")] == ["backward"]
    assert len(events.of_kind("step")[0].site.loops) == 1


def test_with_bodies_loop_spans_and_calls_of_helpers():
    module, events = _events(
        """
        class Trainer:
            def probe(self, opt, helper):
                with torch.no_grad():
                    opt.step()
                for p in self.params:
                    lr = 1
                self._undo()
                helper()
        """
    )
    (step,) = events.of_kind("step")
    assert events.is_with_body(step.site.blocks[-1])
    assert not events.is_with_body(step.site.blocks[-2])
    loop = module.body[0].body.body[0].body.body[1]
    first, last = events.loop_span(loop)
    assert first < last and events.loop_site(loop).names_order == first
    (undo_call,) = events.calls_of("_undo")
    assert undo_call.on_self and undo_call.site.cls is module.body[0]
    assert [call.on_self for call in events.calls_of("helper")] == [False]


def test_the_events_part_brings_the_names_it_reads():
    model = FileModel(needs=("events",))
    assert model.names is not None and model.events is not None
    assert model.visitors().index(model.names) < model.visitors().index(model.events)


# --- facts for the event-order rules (SF303, SF404-SF406, SF408) ----------------------------------------


def test_while_loops_lambdas_and_the_events_of_one_pass():
    module, events = _events(
        """
        def train(model, optimizer, it):
            optimizer.register_step_post_hook(lambda opt, *_: opt.zero_grad())
            while True:
                batch = next(it)
                for micro in batch:
                    model(micro).backward()
                optimizer.step()
            optimizer.zero_grad()
        """
    )
    hook_clear, after_clear = events.of_kind("clear")
    assert hook_clear.site.in_lambda and not after_clear.site.in_lambda
    (backward,) = events.of_kind("backward")
    (step,) = events.of_kind("step")
    loop = module.body[0].body.body[1]
    assert isinstance(loop, cst.While) and step.site.any_loops == (loop,)
    assert len(backward.site.any_loops) == 2 and backward.site.any_loops[0] is loop
    assert events.innermost_loop(step.site, backward.site) is loop
    assert after_clear.site.any_loops == () and events.innermost_loop(step.site, after_clear.site) is None
    assert [e.kind for e in events.iteration(loop) if e.kind != "call"] == ["backward", "step"]
    assert events.iteration(loop, "clear") == []
    start, end = events.loop_span(loop)
    assert start < end


def test_gradient_zeroing_forms_are_clears():
    _, events = _events(
        """
        import torch

        def reset(model, grads):
            for p in model.parameters():
                p.grad.detach_()
                p.grad.zero_()
                p.grad.data.zero_()
            torch._foreach_zero_(grads)
            model.weight.zero_()
        """
    )
    assert [(e.how, _code(e.receiver)) for e in events.of_kind("clear")] == [  # type: ignore[attr-defined]
        ("zero_", "p"), ("zero_", "p"), ("foreach_zero_", "grads"),
    ]  # `model.weight.zero_()` zeroes a weight, not a gradient


def test_grad_scalers_are_known_by_construction_or_use():
    _, events = _events(
        """
        import torch
        from torch.cuda.amp import GradScaler as GS
        from sklearn.preprocessing import StandardScaler

        a = GS()
        scaler = StandardScaler()

        class T:
            def __init__(self):
                self.grad_scaler = torch.amp.GradScaler("cuda")

            def step(self, loss, amp, opt):
                amp.scale(loss).backward()
                self.other.unscale_(opt)
        """
    )
    spelled = lambda text: cst.parse_expression(text)  # noqa: E731
    assert events.is_scaler(spelled("a")) and events.is_scaler(spelled("self.grad_scaler"))
    assert events.is_scaler(spelled("amp")) and events.is_scaler(spelled("self.other"))
    assert not events.is_scaler(spelled("scaler"))


def test_functions_called_follow_plain_calls_and_methods_of_the_same_class():
    _, events = _events(
        """
        import torch

        def clear(opt):
            opt.zero_grad()

        class Trainer:
            def _reset(self):
                clear(self.opt)

            def clear(self):
                self.opt.zero_grad()

            def fit(self, loader):
                for batch in loader:
                    self._reset()
        """
    )
    (loop_call,) = [c for c in events.calls_of("_reset")]
    called = events.functions_called([loop_call])
    assert [f.name.value for f in called] == ["_reset", "clear"]
    assert called[1] is not events.of_kind("clear")[1].site.function  # the plain `clear()`, not the method
    assert [e.kind for e in events.of_kind("backward")] == []


def test_accumulating_backward_and_the_stepped_optimizer():
    from stabfix.model.calls.events import stepped_optimizer

    module = cst.parse_module(textwrap.dedent(
        """
        import torch

        opt = torch.optim.AdamW(params)
        g = torch.autograd.grad(loss, params)
        loss.backward()
        scaler.step(opt)
        scheduler.step()
        """
    ))
    model = FileModel(needs=("events", "optimizers"))
    from stabfix.model.source.traversal import MergedVisitor

    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    events, optimizers = model.events, model.optimizers
    assert [events.accumulates(e) for e in events.of_kind("backward")] == [False, True]
    scaler_step, scheduler_step = events.of_kind("step")
    found = stepped_optimizer(scaler_step, optimizers)
    assert found is not None and _code(found[0]) == "opt" and found[1].class_name == "AdamW"
    assert stepped_optimizer(scheduler_step, optimizers) is None


def test_helpers_named_for_clearing_gradients_are_clears():
    _, events = _events(
        """
        from pyro.infer.util import zero_grads
        import utils

        def loop(params, model, opt):
            zero_grads(params)
            utils.clear_grads(model)
            opt.zero_grad()
            model.zero_grads_count()
        """
    )
    assert [(e.how, _code(e.receiver)) for e in events.of_kind("clear")] == [  # type: ignore[attr-defined]
        ("helper", "params"), ("helper", "model"), ("zero_grad", "opt"),
    ]


def test_an_environment_transition_unpacked_from_step_is_not_an_optimizer_step():
    import libcst as cst

    from stabfix.model.calls.events import unpacked_step

    def first_assign(source: str) -> cst.Assign:
        return cst.ensure_type(cst.parse_module(source).body[0].body[0], cst.Assign)

    assert unpacked_step(first_assign("obs, reward, done, info = env.step(action)\n")) is not None
    assert unpacked_step(first_assign("[obs, reward] = env.step(action)\n")) is not None
    assert unpacked_step(first_assign("loss = opt.step(closure)\n")) is None
    assert unpacked_step(first_assign("(result,) = opt.step(closure)\n")) is None


def test_a_fresh_distributed_autograd_context_is_a_clear_and_its_backward_takes_the_roots():
    _, events = _events(
        """
        from torch.distributed import autograd as dist_ag

        def train(opt, batches):
            for x in batches:
                with dist_ag.context() as ctx:
                    dist_ag.backward(ctx, [model(x).sum()])
                    opt.step(ctx)
        """
    )
    assert [kind for kind, _ in _training(events)] == ["clear", "backward", "step"]
    clear, backward = events.of_kind("clear", "backward")
    assert isinstance(clear, ClearGrad) and clear.how == "context" and _code(clear.receiver) == "ctx"
    assert clear.site.any_loops == backward.site.any_loops  # made anew on every pass
    assert isinstance(backward, Backward) and _code(backward.loss) == "[model(x).sum()]"


def test_stepped_by_tells_an_optimizers_own_step_from_a_wrappers():
    _, events = _events(
        """
        import torch_xla.core.xla_model as xm

        class Backend:
            def optimizer_step(self, optimizer):
                optimizer.step()

        class Trainer:
            def optimizer_step(self, optimizer):
                self.engine.step()

            def fit(self, opt, scaler, strategy):
                opt.step()
                scaler.scale(loss).backward()
                scaler.step(opt)
                xm.optimizer_step(opt)
                self.optimizer_step(opt)
                strategy.optimizer_step(opt)
                self.strategy.step(opt)
        """
    )
    fit = [s for s in events.of_kind("step") if s.site.function.name.value == "fit"]  # type: ignore[union-attr]
    wrappers = [events.stepped_by(step, step.candidates[-1]) for step in fit]  # type: ignore[attr-defined]
    assert wrappers[:3] == [None, None, None]  # the optimizer's own step
    classes = [[events.in_function(f)[0].site.cls.name.value for f in found] for found in wrappers[3:]]  # type: ignore
    # `self.m(opt)`: the class's own method; `strategy.m(opt)`: any class's; no `step` method in the file
    assert classes == [["Trainer"], ["Backend", "Trainer"], []]


def test_gates_are_the_ifs_between_a_loop_and_a_site():
    _, events = _events(
        """
        def train(loader, opt, flags, warm):
            if warm:
                for i, x in enumerate(loader):
                    x.backward()
                    if flags[i]:
                        if i > 2:
                            pass
                        else:
                            opt.step()
        """
    )
    (step,) = events.of_kind("step")
    (loop,) = step.site.any_loops
    gates = [(_code(test), negated) for test, negated in events.gates(step.site, loop)]
    assert gates == [("flags[i]", False), ("i > 2", True)]  # `if warm:` is outside the loop
    assert events.gates(events.of_kind("backward")[0].site, loop) == []


def test_the_deprecated_clipping_functions_are_clipping_events_however_imported():
    _, events = _events(
        """
        import torch
        import torch.nn as nn
        from torch.nn.utils import clip_grad_value as clamp_gradients
        from torch.nn.utils.clip_grad import clip_grad_norm

        def clip_norm_for_log(params):
            return 0.0

        clip_grad_norm(model.parameters(), 1.0)
        nn.utils.clip_grad_norm(model.parameters(), 1.0)
        torch.nn.utils.clip_grad_value(model.parameters(), 0.5)
        clamp_gradients(model.parameters(), 0.5)
        clip_norm_for_log(model.parameters())
        """
    )
    clips = [_code(event.node) for event in events.of_kind("clip")]
    assert clips == [
        "clip_grad_norm(model.parameters(), 1.0)",
        "nn.utils.clip_grad_norm(model.parameters(), 1.0)",
        "torch.nn.utils.clip_grad_value(model.parameters(), 0.5)",
        "clamp_gradients(model.parameters(), 0.5)",
    ]
