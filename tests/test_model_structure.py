"""The `steps` part: which loops and functions run a training step, and which only run many of them."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model import FileModel
from stabfix.model.source.traversal import walk
from stabfix.model.training.step_frames import loop_header
from stabfix.model.training.structure import StepIndex


def _steps(source: str) -> StepIndex:
    model = FileModel(["steps"])
    walk(cst.parse_module(textwrap.dedent(source)), model.visitors())
    return model.steps


def _training_loops(steps: StepIndex) -> list[str]:
    return [loop_header(loop.node) for loop in steps._loops if steps.is_training_loop(loop)]


def _handovers(steps: StepIndex) -> dict[str, bool]:
    frames = [*steps._loops, *steps._functions]
    return {
        cst.Module(body=[]).code_for_node(call.func): steps.hands_over_update(call)
        for frame in frames
        for call in frame.facts.handovers
    }


def test_a_live_loss_handed_with_the_optimizer_to_unseen_code_is_an_update():
    steps = _steps(
        """
        from util.misc import NativeScaler

        def train_one_epoch(model, loader, optimizer, device, scaler_obj):
            model.train()
            for x, y in loader:
                out = model(x.to(device))
                scaler_obj(out, optimizer, parameters=model.parameters())
        """
    )
    assert _handovers(steps) == {"scaler_obj": True}
    assert _training_loops(steps) == ["for x, y in loader"]


def test_a_learning_rate_setter_a_logged_loss_or_a_model_wrapper_hands_over_no_update():
    steps = _steps(
        """
        import lr_sched
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train_one_epoch(model, loader, optimizer, device, log, engine):
            model = DDP(model.to(device))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model, optimizer = engine.make_private(module=model, optimizer=optimizer, data_loader=loader)
            model.train()
            for it, (x, y) in enumerate(loader):
                lr_sched.adjust_learning_rate(optimizer, it / len(loader), 0.1)
                out = model(x.to(device))
                log(out.detach(), optimizer)
                log(out.item(), optimizer)
        """
    )
    assert set(_handovers(steps).values()) == {False}
    assert _training_loops(steps) == []


def test_a_function_of_the_file_is_judged_by_its_own_body_not_its_arguments():
    steps = _steps(
        """
        def record(value, optimizer):
            print(value, optimizer.param_groups[0]["lr"])

        def train_one_epoch(model, loader, optimizer, device):
            model.train()
            for x, y in loader:
                out = model(x.to(device))
                record(out, optimizer)
        """
    )
    assert _handovers(steps)["record"] is False
    assert _training_loops(steps) == []


def test_the_phases_of_a_benchmark_run_many_steps_each():
    steps = _steps(
        """
        for phase, iters in enumerate([5, 20]):
            batch = make_batch()
            for _ in range(iters):
                loss = model(batch).mean()
                loss.backward()
                opt.step()
        """
    )
    outer, inner = steps._loops
    assert not steps.is_training_loop(outer) and not steps.is_update_loop(outer)
    assert steps.is_training_loop(inner)


HELPER_STEP = """
class Runner:
    def run(self):
        while True:
            self.run_step(next(self.data))

    def run_step(self, batch):
        self.forward_backward(batch)
        if self.ready():
            self.optimize()
        self.update_ema()

    def forward_backward(self, batch):
        self.model(batch).mean().backward()

    def optimize(self):
        self.norms()
        self.opt.step()

    def update_ema(self):
        self.ema_copy()

    def norms(self): ...
    def ema_copy(self): ...
    def ready(self): ...
"""


def test_a_step_made_of_helpers_is_a_step_function():
    steps = _steps(HELPER_STEP)
    functions = {frame.name: frame for frame in steps._functions}
    assert steps.is_step_function(functions["run_step"])
    assert not steps.is_step_function(functions["forward_backward"])
    assert _training_loops(steps) == ["while True"]


def test_what_an_every_step_helper_calls_behind_no_gate_runs_every_step():
    steps = _steps(HELPER_STEP)
    functions = {frame.name: frame for frame in steps._functions}
    assert steps.is_called_every_step(functions["ema_copy"])  # run_step -> update_ema -> ema_copy
    assert not steps.is_called_every_step(functions["norms"])  # optimize() runs behind `if self.ready():`
