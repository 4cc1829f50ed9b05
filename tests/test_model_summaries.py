"""The model's `summaries` part: node-free facts per function (returns, element by element; effects on
`self` and parameters), bottom-up over the call graph, with a fixpoint for recursion and a depth limit."""

from __future__ import annotations

import pickle
import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.functions.summaries import MAX_DEPTH, ClassSummary, Effect, FunctionSummary, ValueFacts
from stabfix.model.functions.summary_facts import LEAF_SETTER
from stabfix.model.source.traversal import MergedVisitor


def _summaries(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("summaries",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    defs = {}

    class _Defs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            defs[node.name.value] = node

    module.visit(_Defs())
    return module, model.summaries, defs


def _calls(module: cst.Module, name: str) -> list[cst.Call]:
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, (cst.Name, cst.Attribute)) and cst.Module(body=[]).code_for_node(node.func) == name:
                found.append(node)

    module.visit(_Calls())
    return found


def test_tuple_return_element_by_element():
    _, summaries, defs = _summaries(
        """
        import torch

        def prepare(batch):
            inputs = torch.tensor(batch["x"]).cuda()
            return inputs, torch.tensor(batch["y"], requires_grad=True)
        """
    )
    summary = summaries.of(defs["prepare"])
    assert len(summary.returns) == 2
    inputs, labels = summary.returns
    assert labels.made_to_require_grad and labels.requires_grad is True and labels.history is False
    assert not inputs.made_to_require_grad and inputs.device == "accelerator"


def test_returned_element_followed_through_callers_unpacking():
    module, summaries, _ = _summaries(
        """
        import torch
        import torch.nn.functional as F

        def load(batch):
            labels = torch.tensor(batch["y"], requires_grad=True)
            return batch["x"], labels

        def prepare(batch):
            return load(batch)

        def probabilities(logits):
            return F.softmax(logits, dim=1)

        def step(model, batch):
            pair = prepare(batch)
            x, y = pair
            return probabilities(model(x)), y
        """
    )
    step = summaries.of_call(_calls(module, "step")[0]) if _calls(module, "step") else None
    assert step is None  # `step` is never called: ask by its definition
    _, summaries, defs = _summaries(module.code)
    probs, target = summaries.of(defs["step"]).returns
    assert probs.activation == "softmax"
    assert target.made_to_require_grad
    assert summaries.of(defs["step"]).return_depth == 2  # `y` comes from `prepare` -> `load`


def test_effects_two_calls_deep_mapped_to_the_callers_spelling():
    module, summaries, defs = _summaries(
        """
        import torch

        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                return sum(model(x).sum().item() for x in loader)

        def log_progress(net, loader, history):
            history.append(evaluate(net, loader))

        class Runner:
            def fit(self, loader, optimizer):
                for x in loader:
                    self.model(x).sum().backward()
                    optimizer.step()
                    optimizer.zero_grad()
                log_progress(self.model, loader, self.history)
        """
    )
    log = summaries.of(defs["log_progress"])
    assert Effect("eval", "net", restored=False, depth=1, via=("evaluate",)) in log.effects
    assert Effect("store", "history") in log.effects
    assert any(effect.kind == "no_grad" and effect.depth == 1 for effect in log.effects)
    fit = summaries.of(defs["fit"])
    kinds = {(effect.kind, effect.target) for effect in fit.effects}
    assert {("eval", "self.model"), ("store", "self.history"), ("backward", None), ("step", "optimizer"),
            ("zero_grad", "optimizer")} <= kinds
    assert [e.via for e in fit.effects if e.kind == "eval"] == [("log_progress", "evaluate")]
    assert fit.receiver == "self" and fit.parameters == ("loader", "optimizer")


def test_eval_switched_back_later_is_restored_in_the_caller():
    _, summaries, defs = _summaries(
        """
        def evaluate(model):
            model.eval()
            return model(1)

        def validate(model):
            score = evaluate(model)
            model.train()
            return score

        def peek(model):
            return evaluate(model)
        """
    )
    assert [e.restored for e in summaries.of(defs["evaluate"]).effects_of("eval")] == [False]
    assert [e.restored for e in summaries.of(defs["validate"]).effects_of("eval")] == [True]
    assert [e.restored for e in summaries.of(defs["peek"]).effects_of("eval")] == [False]


def test_recursion_terminates_at_a_fixpoint():
    _, summaries, defs = _summaries(
        """
        import torch.nn.functional as F

        def descend(x, n):
            if n == 0:
                return F.softmax(x, dim=-1)
            return descend(x, n - 1)

        def ping(model, n):
            model.eval()
            return pong(model, n - 1)

        def pong(model, n):
            if n:
                return ping(model, n)
            return F.log_softmax(model(n), dim=-1)
        """
    )
    descend = summaries.of(defs["descend"])
    assert descend.converged and [facts.activation for facts in descend.returns] == ["softmax"]
    pong = summaries.of(defs["pong"])
    assert pong.converged
    assert any(effect.kind == "eval" and effect.target == "model" for effect in pong.effects)
    assert summaries.of(defs["ping"]).converged


def test_depth_limit_cuts_facts_deeper_than_it():
    chain = "\n".join(f"def f{i}(model):\n    return f{i + 1}(model)\n" for i in range(MAX_DEPTH + 2))
    last = MAX_DEPTH + 2
    _, summaries, defs = _summaries(
        "import torch.nn.functional as F\n" + chain
        + f"def f{last}(model):\n    model.eval()\n    return F.softmax(model(1), dim=1)\n"
    )
    near = summaries.of(defs[f"f{last - MAX_DEPTH}"])  # MAX_DEPTH calls above the facts: still known
    assert near.returns[0].activation == "softmax"
    assert any(effect.kind == "eval" for effect in near.effects)
    cut = summaries.of(defs[f"f{last - MAX_DEPTH - 1}"])  # one call more: cut
    assert not cut.returns or cut.returns[0].activation is None
    assert not any(effect.kind == "eval" for effect in cut.effects)
    far = summaries.of(defs["f0"])  # MAX_DEPTH + 2 calls above them: cut
    assert not far.returns or far.returns[0].activation is None
    assert not any(effect.kind == "eval" for effect in far.effects)


def test_called_without_grad_through_callers_of_callers():
    _, summaries, defs = _summaries(
        """
        import torch

        def evaluate(model, loader):
            model.eval()
            return [model(x) for x in loader]

        def report(model, loader):
            print(evaluate(model, loader))

        def fit(model, loader):
            with torch.no_grad():
                report(model, loader)

        def check(model, loader):
            return evaluate(model, loader)
        """
    )
    assert summaries.always_called_without_grad(defs["report"])
    assert not summaries.always_called_without_grad(defs["evaluate"])  # `check` calls it with autograd on
    assert not summaries.always_called_without_grad(defs["fit"])  # never called in the file


def test_summaries_are_node_free_and_picklable():
    module, summaries, defs = _summaries(
        """
        import torch.nn as nn

        class Net(nn.Module):
            def forward(self, x):
                return self.fc(x)

        def build():
            return Net()

        net = Net()
        """
    )
    cls = summaries.of_call(_calls(module, "Net")[-1])
    assert isinstance(cls, ClassSummary) and cls.bases == ("torch.nn.Module",)
    assert isinstance(cls.method("forward"), FunctionSummary)
    restored = pickle.loads(pickle.dumps((cls, summaries.of(defs["build"]))))
    assert restored == (cls, summaries.of(defs["build"]))
    assert ValueFacts.join([ValueFacts(device="host"), ValueFacts(device="accelerator")]).device is None


def test_foreign_calls_ask_the_hook():
    module, summaries, defs = _summaries(
        """
        from helpers.data import prepare
        from helpers.evaluation import evaluate

        def fit(model, batch):
            x, y = prepare(batch)
            evaluate(model)
            return y
        """
    )
    asked = []
    known = FunctionSummary("prepare", ("batch",), None, returns=(ValueFacts(), ValueFacts(requires_grad=True, history=False)))

    def foreign(qualified):
        asked.append(qualified)
        return known

    assert summaries.of_call(_calls(module, "prepare")[0]) is None  # by default: unknown
    summaries.foreign = foreign
    assert summaries.of_call(_calls(module, "prepare")[0]) is known
    assert asked == ["helpers.data.prepare"]
    elsewhere = {"helpers.data.prepare": known,
                 "helpers.evaluation.evaluate": FunctionSummary("evaluate", ("net",), None, effects=(Effect("eval", "net"),))}
    summaries.foreign = elsewhere.get
    fit = summaries.of(defs["fit"])
    assert fit.returns[0].made_to_require_grad  # element 1 of another file's `prepare`
    assert Effect("eval", "model", depth=1, via=("evaluate",)) in fit.effects


def test_what_every_call_passes_for_a_parameter():
    module, summaries, defs = _summaries(
        """
        import torch.nn as nn

        def build():
            return nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=1))

        def fit(model, loader, epochs=3):
            for x in loader:
                model(x)

        def run(loader, hook):
            fit(build(), loader)
            fit(model=nn.Linear(4, 2), loader=loader, epochs=1)

        def later(model):
            return model

        callbacks = [later]
        """
    )
    def param(function, name):
        return next(b for b in summaries.names.scopes[defs[function]].bindings[name] if b.kind == "param")

    code = lambda nodes: [cst.Module(body=[]).code_for_node(node) for node in nodes]  # noqa: E731
    assert code(summaries.passed_for(param("fit", "model"))) == ["build()", "nn.Linear(4, 2)"]
    assert code(summaries.passed_for(param("fit", "epochs"))) == ["3", "1"]  # the default where a call leaves it out
    assert summaries.passed_for(param("later", "model")) is None  # handed out as a callback: calls out of sight
    assert summaries.passed_for(param("run", "hook")) is None  # never called in the file
    fit_input = _calls(module, "model")[0]
    assert summaries.activations.of(fit_input) is None  # one call passes a softmax model, the other raw scores


def test_what_every_construction_passes_for_an_init_parameter():
    module, summaries, defs = _summaries(
        """
        class Trainer:
            def __init__(self, model, gpu_id, every=5):
                self.gpu_id = gpu_id

        class Probe:
            def __init__(self, device):
                self.device = device

        class Special(Probe):
            pass

        def main(rank, model):
            Trainer(model, rank)
            Trainer(model=model, gpu_id=rank, every=1)
            Probe(rank)
        """
    )
    def param(function, name):
        return [b for b in summaries.names.all_bindings() if b.kind == "param" and b.name == name
                and b.scope.node is function][0]

    trainer_init, probe_init = [node for node in _defs_named(module, "__init__")]
    code = lambda nodes: [cst.Module(body=[]).code_for_node(node) for node in nodes]  # noqa: E731
    assert code(summaries.passed_for(param(trainer_init, "gpu_id"))) == ["rank", "rank"]
    assert code(summaries.passed_for(param(trainer_init, "every"))) == ["5", "1"]
    assert summaries.passed_for(param(trainer_init, "self")) is None  # the receiver is not passed
    assert summaries.passed_for(param(probe_init, "device")) is None  # a base class: constructions out of sight


def _defs_named(module: cst.Module, name: str) -> list[cst.FunctionDef]:
    found = []

    class _Defs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node.name.value == name:
                found.append(node)

    module.visit(_Defs())
    return found


def test_parameter_made_to_require_grad_in_place_is_an_effect_in_the_callers_spelling():
    module, summaries, defs = _summaries(
        """
        import torch

        def mark(t):
            return t.requires_grad_(True)

        def flag(t):
            t.requires_grad = True

        def rebinds(t):
            t = t.detach()
            t.requires_grad_()

        def reads_its_grad(t):
            t.requires_grad_()
            return t.grad

        def probe(u):
            mark(u)
            return u.grad

        def fit(y, z, w, v):
            mark(y)
            flag(z)
            rebinds(w)
            reads_its_grad(v)
        """
    )
    assert Effect("requires_grad", "t") in summaries.of(defs["mark"]).effects
    # `t.requires_grad = True` (torch allows it on a leaf only) says so in the effect's detail
    assert Effect("requires_grad", "t", detail=LEAF_SETTER) in summaries.of(defs["flag"]).effects
    assert not summaries.of(defs["rebinds"]).effects_of("requires_grad")
    assert not summaries.of(defs["reads_its_grad"]).effects_of("requires_grad")
    assert not summaries.of(defs["probe"]).effects_of("requires_grad")  # a callee's mark, kept for itself
    marked = {effect.target for call in _calls(module, "mark") + _calls(module, "flag")
              for effect in summaries.effects_at(call) if effect.kind == "requires_grad"}
    assert marked == {"u", "y", "z"}


def test_leaf_made_to_require_grad_through_moves_casts_and_views():
    _, summaries, defs = _summaries(
        """
        import torch

        def target(y, device):
            return torch.tensor(y, requires_grad=True).to(device).float().view(-1, 1)

        def label(y):
            return y.requires_grad_().long()
        """
    )
    assert summaries.of(defs["target"]).returned.made_to_require_grad
    assert not summaries.of(defs["label"]).returned.made_to_require_grad


def test_a_method_called_on_an_instance_the_file_builds_is_summarised():
    module, summaries, defs = _summaries(
        """
        class Steps:
            def run(self, t):
                t.requires_grad_()

            @staticmethod
            def plain(t):
                t.requires_grad_()


        def fit(y, z, w):
            Steps().run(y)
            steps = Steps()
            steps.run(z)
            steps.plain(w)
        """
    )
    marked = {effect.target for name in ("Steps().run", "steps.run", "steps.plain")
              for call in _calls(module, name) for effect in summaries.effects_at(call)}
    assert marked == {"y", "z", "w"}




_GATE = """
import lib
from torch import nn


class Gate(nn.Module):
    def train_step(self, x):
        return x


class Other:
    def evaluate(self, x):
        return x


def fit(gate, pairs):
    for x in pairs:
        gate.train_step(x)


def built_here(pairs):
    gate = Gate()
    gate.train_step(pairs)


def library_object(pairs):
    runner = lib.Runner()
    runner.train_step(pairs)


def handed(worker, pairs):
    worker.train_step(pairs)


handed(Other(), [])
"""


def test_a_method_called_on_an_instance_is_tied_to_its_class():
    module, summaries, defs = _summaries(_GATE)
    calls = {cst.Module(body=[]).code_for_node(call): call for call in _calls(module, "gate.train_step")}
    method_called = summaries.callers.method_called
    # a parameter the file shows nothing about: the one class of the file with that method
    assert method_called(calls["gate.train_step(x)"]) is defs["train_step"]
    # an instance of the class built in the file
    assert method_called(calls["gate.train_step(pairs)"]) is defs["train_step"]
    # an instance of a library class, or a parameter every caller binds to another class: not that method
    (library,) = _calls(module, "runner.train_step")
    assert method_called(library) is None
    (handed,) = _calls(module, "worker.train_step")
    assert method_called(handed) is None




def test_in_place_detach_effects_spelled_as_the_caller_spells_them():
    module, summaries, defs = _summaries(
        """
        class Steps:
            def run(self, state, k):
                state[k].detach_()
                state[0].detach_()

        def reset(trainer, h):
            trainer.h = trainer.h.detach()
            h.detach_()

        def train(net, mem, k):
            Steps().run(mem, k)
            steps = Steps()
            steps.run(mem, k)
            reset(net, mem)
        """
    )
    assert {e.target for e in summaries.of(defs["reset"]).effects_of("detach")} == {"trainer.h", "h"}
    first, second = _calls(module, "Steps().run") + _calls(module, "steps.run")
    assert sorted(summaries.detached_at(first)) == ["mem[*]", "mem[0]"]
    assert sorted(summaries.detached_at(second)) == ["mem[*]", "mem[0]"]
    assert sorted(summaries.detached_at(_calls(module, "reset")[0])) == ["mem", "net.h"]


def test_an_unscale_is_an_effect_on_the_scaler_spelled_as_the_caller_spells_it():
    module, summaries, defs = _summaries(
        """
        def unscale(grad_scaler, optimizer):
            grad_scaler.unscale_(optimizer)

        def step(scaler, opt):
            unscale(scaler, opt)
        """
    )
    assert [e.target for e in summaries.of(defs["unscale"]).effects_of("unscale")] == ["grad_scaler"]
    assert [e.target for e in summaries.effects_at(_calls(module, "unscale")[0]) if e.kind == "unscale"] == ["scaler"]


def test_with_calls_adds_the_backward_clear_and_unscale_a_helper_runs_at_its_call():
    module, summaries, defs = _summaries(
        """
        def backward_and_clear(loss, opt, grad_scaler):
            loss.backward()
            opt.zero_grad()
            grad_scaler.unscale_(opt)

        def step(loss, optimizer, scaler):
            optimizer.step()
            backward_and_clear(loss, optimizer, scaler)
        """
    )
    call = _calls(module, "backward_and_clear")[0]
    events = summaries.events.in_function(defs["step"])
    spelled = (lambda event: cst.Module(body=[]).code_for_node(
        getattr(event, "receiver", None) or getattr(event, "scaler", None) or event.node))
    kinds = [(event.kind, spelled(event)) for event in summaries.with_calls(events)]
    assert ("backward", "backward_and_clear(loss, optimizer, scaler)") in kinds
    assert ("clear", "optimizer") in kinds and ("unscale", "scaler") in kinds
    assert all(event.node is call for event in summaries.with_calls(events)[len(events):])


def test_parameters_whose_gradient_a_function_never_reads():
    _, summaries, defs = _summaries(
        """
        import torch

        def shape_pair(x, y, criterion):
            if isinstance(criterion, torch.nn.MSELoss):
                return x.view(x.size(0), -1), y.view(y.size(0), -1).float()
            return x, y

        def outer(x, y):
            return shape_pair(x, y, None)

        def penalised(x, y):
            gradient_penalty(y)
            return x, y

        def keeps(self, x, y):
            self.kept = y
            return x

        def reads(x, y):
            print(y.grad)
            return x, y

        def boxed(x, y):
            return {"x": x, "y": y}
        """
    )
    pair = summaries.of(defs["shape_pair"])
    assert [fact.parameter for fact in pair.returns] == ["x", "y"]
    assert {"x", "y"} <= set(pair.grad_unread)
    # handed on to a function that does not read it either, any number of calls deep
    assert {"x", "y"} <= set(summaries.of(defs["outer"]).grad_unread)
    # near misses: handed to code the file does not show, stored, its `.grad` read, returned in a container
    assert "y" not in summaries.of(defs["penalised"]).grad_unread
    assert "y" not in summaries.of(defs["keeps"]).grad_unread
    assert "y" not in summaries.of(defs["reads"]).grad_unread
    assert "y" not in summaries.of(defs["boxed"]).grad_unread


def test_a_parameter_handed_back_is_the_callers_argument():
    _, summaries, defs = _summaries(
        """
        def shape_pair(x, y):
            return x.view(-1), y.float()

        def renamed(a, b):
            return shape_pair(b, a)

        def local(a):
            c = make()
            return shape_pair(a, c)
        """
    )
    assert [fact.parameter for fact in summaries.of(defs["renamed"]).returns] == ["b", "a"]
    assert [fact.parameter for fact in summaries.of(defs["local"]).returns] == ["a", None]


def test_a_question_about_a_calls_function_spares_a_constructed_class():
    module, summaries, defs = _summaries(
        """
        import torch.nn as nn
        from helpers.models import Remote

        class Net(nn.Module):
            def forward(self, x):
                return x

        def build():
            return Net()

        def fit():
            net = Net()
            other = Remote()
            return build()
        """
    )
    asked = []
    summaries.foreign = lambda qualified: asked.append(qualified)
    assert summaries.function_of_call(_calls(module, "build")[0]).name == "build"
    assert summaries.function_of_call(_calls(module, "Net")[1]) is None  # constructing a class of this file
    assert not summaries.built(defs["forward"])  # ... whose methods were not summarised for it
    assert isinstance(summaries.of_call(_calls(module, "Net")[1]), ClassSummary)
    assert summaries.function_of_call(_calls(module, "Remote")[0]) is None and asked == ["helpers.models.Remote"]
    only_functions = []
    summaries.foreign_function = lambda qualified: only_functions.append(qualified)
    summaries.function_of_call(_calls(module, "Remote")[0])
    assert only_functions == ["helpers.models.Remote"] and asked == ["helpers.models.Remote"]  # the narrower hook


def test_a_returned_tensor_built_in_host_memory_is_host_built_through_helpers():
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from stabfix.model import FileModel
    from stabfix.model.source.traversal import MergedVisitor

    source = (
        "import torch\n"
        "def ones(n):\n    return torch.ones(n, n)\n"
        "def causal(n):\n    return torch.tril(ones(n)) > 0\n"
        "def placed(n, d):\n    return torch.ones(n, device=d)\n"
        "def layer(n):\n    return torch.nn.Linear(n, n)\n"
    )
    model = FileModel(("summaries",))
    module = cst.parse_module(source)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    built = {f.name.value: model.summaries.of(f).returned.host_built for f in module.body[1:]}
    assert built == {"ones": True, "causal": True, "placed": None, "layer": None}


def test_a_question_about_effects_never_builds_returns_nor_the_other_way_round():
    module, summaries, defs = _summaries("""
        import torch

        def evaluate(model, x):
            model.eval()
            return torch.softmax(model(x), -1)

        def run(model, x):
            probs = evaluate(model, x)
            return probs
        """)

    def no_returns(*args, **kwargs):
        raise AssertionError("the returns half was built for an effects question")

    history_origin, summaries.history.origin = summaries.history.origin, no_returns
    assert [e.kind for e in summaries.effects_at(_calls(module, "evaluate")[0])] == ["eval"]
    assert summaries.of(defs["run"]).effects_of("eval")
    summaries.history.origin = history_origin
    assert not summaries.built(defs["evaluate"], "returns") and summaries.built(defs["evaluate"], "effects")
    assert summaries.of(defs["run"]).returned.activation == "softmax"
    assert not summaries.built(defs["run"], "effects") or summaries.built(defs["run"], "returns")


def test_a_summary_pickles_with_both_halves():
    module, summaries, defs = _summaries("""
        def evaluate(model, x):
            model.eval()
            return model(x).softmax(-1)
        """)
    summary = summaries.of(defs["evaluate"])
    again = pickle.loads(pickle.dumps(summary))
    assert again == summary and again.effects_of("eval") and again.returned == summary.returned


def test_a_question_about_returns_never_builds_grad_unread():
    module, summaries, defs = _summaries("""
        def log_norm(t):
            print(t.norm())

        def to_device(x, device):
            log_norm(x)
            return x.to(device)
        """)

    def no_gradients(*args, **kwargs):
        raise AssertionError("the parameters whose gradient is unread were built for a returns question")

    gradients_of, summaries.gradients.of = summaries.gradients.of, no_gradients
    returned = summaries.of(defs["to_device"]).returned
    assert returned.parameter == "x" and returned.device == "accelerator"
    summaries.gradients.of = gradients_of
    assert not summaries.built(defs["to_device"], "grad_unread")
    assert not summaries.built(defs["log_norm"])  # a callee the returns never read: nothing of it built
    assert summaries.of(defs["to_device"]).grad_unread == ("x",)  # `device` is handed to `.to`, not shown
    assert summaries.built(defs["log_norm"], "grad_unread")


def test_grad_unread_through_recursion_settles_on_what_every_call_shows():
    _, summaries, defs = _summaries("""
        def ping(x, n):
            if n > 0:
                pong(x, n - 1)

        def pong(x, n):
            ping(x, n)

        def reader(x, n):
            if n > 0:
                reader(x, n - 1)
            print(x.grad)

        def hands(x, y):
            return loops(x, y)

        def loops(x, y):
            if y:
                return hands(x, None)
            return x.to("cuda")
        """)
    # a cycle that hands `x` round is not shown to leave its gradient unread: nothing outside says so
    assert summaries.of(defs["ping"]).grad_unread == ("n",) and summaries.of(defs["pong"]).grad_unread == ("n",)
    assert "x" not in summaries.of(defs["reader"]).grad_unread
    # the returns a recursive function hands back settle before its unread parameters are read from them
    assert summaries.of(defs["hands"]).grad_unread == ("y",) and summaries.of(defs["loops"]).grad_unread == ("y",)
    assert all(summaries.of(defs[name]).converged for name in ("ping", "pong", "reader", "hands", "loops"))


_INSTANCES = """
import torch
from torch import nn
from helpers.models import Remote


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.cache = []

    def forward(self, x):
        self.cache.append(x)
        return self.lin(x)


class Holder:
    def __init__(self):
        self.net = Net()

    def go(self, x):
        return self.net(x)


class Scored:
    def __call__(self, x):  # a class's own __call__ runs, not its forward
        x.requires_grad_()

    def forward(self, x):
        x.detach_()


def fit(x, z):
    net = Net()
    net(x)
    scored = Scored()
    scored(z)
    remote = Remote()
    remote(x)
    lin = torch.nn.Linear(2, 2)
    lin(x)
"""


def test_a_call_of_an_instance_runs_its_classs_forward_or_call():
    module, summaries, defs = _summaries(_INSTANCES)

    def effects(name):
        (call,) = _calls(module, name)
        return {(effect.kind, effect.target) for effect in summaries.effects_at(call)}

    assert effects("net") == {("store", "net.cache")}
    assert effects("self.net") == {("store", "self.net.cache")}
    assert effects("scored") == {("requires_grad", "z")}
    assert effects("lin") == set()  # a library class: unknown
    assert summaries.function_of_call(_calls(module, "net")[0]) is None  # what it returns is left to the modules part
    # another scanned file's class: its summary's forward, through the hook
    remote = FunctionSummary("Remote.forward", ("x",), "self", effects=(Effect("eval", "self.body"), Effect("detach", "x")))
    summaries.foreign = {"helpers.models.Remote": ClassSummary("Remote", ("torch.nn.Module",), (("forward", remote),))}.get
    (call,) = _calls(module, "remote")
    assert {(e.kind, e.target) for e in summaries.effects_at(call)} == {("eval", "remote.body"), ("detach", "x")}


_HANDED = """
import torch


class LossCompute:
    def __init__(self, criterion, opt=None):
        self.criterion, self.opt = criterion, opt

    def __call__(self, x, y):
        loss = self.criterion(x, y)
        loss.backward()
        if self.opt is not None:
            self.opt.step()
        return loss.item()


class Other:
    def __call__(self, x, y):
        x.detach_()


def run_epoch(batches, loss_compute):
    for x, y in batches:
        loss_compute(x, y)


def mixed(batches, scorer):
    for x, y in batches:
        scorer(x, y)


def unseen(batches, scorer):
    for x, y in batches:
        scorer(x, y)


def library(batches, scorer):
    for x, y in batches:
        scorer(x, y)


run_epoch(train, LossCompute(crit, opt))
run_epoch(val, LossCompute(crit))
mixed(train, LossCompute(crit, opt))
mixed(val, Other())
library(train, torch.nn.CrossEntropyLoss())
"""


def test_a_called_parameter_runs_the_call_of_the_one_class_its_callers_hand_it():
    module, summaries, defs = _summaries(_HANDED)
    kinds = lambda call: {(effect.kind, effect.target) for effect in summaries.effects_at(call)}
    (loss_compute,) = _calls(module, "loss_compute")
    assert kinds(loss_compute) == {("backward", None), ("step", "loss_compute.opt")}
    for name in ("scorer",):  # two classes, no caller, a library class: unknown
        assert all(kinds(call) == set() for call in _calls(module, name))
    trained, validated = _calls(module, "run_epoch")
    assert ("step", None) in kinds(trained)
    # built holding `None` in the attribute it steps (by default here): that step cannot run
    assert kinds(validated) == {("backward", None)}
