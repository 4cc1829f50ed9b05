"""The model's `events_through_calls` part: what a called function runs, spliced in at the call, in order."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> FileModel:
    model = FileModel(("events_through_calls",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _kinds_in_loop(model: FileModel) -> list[tuple[str, str]]:
    events = model.events_through_calls
    loop = next(e.site.any_loops[-1] for e in events.of_kind("call") if e.site.any_loops)
    return [(event.kind, _code(event.node)) for event in events.iteration(loop) if event.kind != "call"]


def test_a_helpers_clear_and_step_follow_its_call_in_the_helpers_order():
    model = _model("""
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def apply(o):
            o.step()
            o.zero_grad()

        for x in loader:
            model(x).sum().backward()
            apply(opt)
    """)
    assert _kinds_in_loop(model) == [("backward", "model(x).sum().backward()"), ("step", "apply(opt)"),
                                     ("clear", "apply(opt)")]
    step = model.events_through_calls.of_kind("step")[-1]
    assert _code(step.candidates[0]) == "opt"  # the caller's optimizer, not the helper's parameter
    assert model.events_through_calls.via(step) == ("apply",)


def test_a_method_called_on_an_instance_and_a_scalers_step_through_a_helper():
    model = _model("""
        import torch
        scaler = torch.cuda.amp.GradScaler()

        class Updater:
            def run(self, s, o):
                s.step(o)
                s.update()

        for x in loader:
            scaler.scale(model(x).sum()).backward()
            Updater().run(scaler, opt)
    """)
    step = next(e for e in model.events_through_calls.of_kind("step") if model.events_through_calls.via(e))
    assert [_code(candidate) for candidate in step.candidates] == ["scaler", "opt"]
    assert _code(step.node) == "Updater().run(scaler, opt)"


def test_what_the_callee_does_to_its_own_objects_is_not_spliced():
    model = _model("""
        import torch

        def fresh_run(net, data):
            local = torch.optim.SGD(net.parameters(), lr=0.1)
            local.zero_grad()
            net(data).sum().backward()
            local.step()

        for x in loader:
            fresh_run(model, x)
    """)
    # the construction and the backward are the callee's own facts about the pass; its clear and step
    # act on a local the caller cannot name: unknown to the caller, so not spliced
    assert _kinds_in_loop(model) == [("optimizer", "fresh_run(model, x)"), ("backward", "fresh_run(model, x)")]


def test_events_of_one_call_are_told_apart_from_the_callers_own():
    model = _model("""
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step_and_clip(o, net):
            o.step()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)

        for x in loader:
            model(x).sum().backward()
            step_and_clip(opt, model)
            opt.step()
    """)
    events = model.events_through_calls
    spliced_step, own_step = events.of_kind("step")[-2:]
    clip = events.of_kind("clip")[-1]
    assert events.one_call(spliced_step, clip)
    assert not events.one_call(own_step, clip)


def test_a_query_looks_up_only_the_calls_it_can_see_and_answers_as_the_whole_file_does():
    # another file's callee costs that file's model: a question about one loop must not look up every call
    source = """
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def apply(o):
            o.step()
            o.zero_grad()

        def other(o):
            o.zero_grad()

        def train():
            for x in loader:
                model(x).sum().backward()
                apply(opt)

        def evaluate():
            other(opt)
            other(opt)
    """
    model = _model(source)
    events = model.events_through_calls
    looked_up: list[str] = []
    effects_at = model.summaries.effects_at
    model.summaries.effects_at = lambda call: looked_up.append(_code(call)) or effects_at(call)
    assert [e.kind for e in events.of_kind("call", "update")] == ["call", "call", "call", "call"]
    assert looked_up == []  # no callee can splice a call or an update
    loop = next(e.site.any_loops[-1] for e in events.of_kind("call") if e.site.any_loops)
    in_loop = [(e.kind, _code(e.node)) for e in events.iteration(loop, "step", "clear")]
    assert in_loop == [("step", "apply(opt)"), ("clear", "apply(opt)")]
    assert "apply(opt)" in looked_up and "other(opt)" not in looked_up  # `evaluate`'s calls sit in no loop
    evaluate = next(e.site.function for e in events.of_kind("call") if _code(e.node) == "other(opt)")
    assert [_code(e.node) for e in events.in_function(evaluate, "clear")] == ["other(opt)", "other(opt)"]
    whole = _model(source).events_through_calls
    assert [(e.kind, _code(e.node)) for e in events.events] == [(e.kind, _code(e.node)) for e in whole.events]
