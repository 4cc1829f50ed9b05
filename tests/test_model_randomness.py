"""The model's `randomness` part (draws, seeds, the entry guard) and the `schedulers` and `grad_inputs` queries."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls.events import Step
from stabfix.model.calls.schedulers import is_lr_scheduler
from stabfix.model.domain.grad_inputs import GradInputs
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str, *needs: str) -> tuple[FileModel, cst.Module]:
    model = FileModel(needs)
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model, module


def test_draws_are_found_through_aliases_and_described():
    model, _ = _model(
        """
        import numpy as np
        from torch import nn as tnn
        from torch.utils.data import DataLoader as DL

        layer = tnn.Conv2d(3, 8, 3)
        loader = DL(ds, shuffle=True)
        order = np.random.permutation(10)
        plain = DL(ds, shuffle=False)
        """,
        "randomness",
    )
    whats = [call.what for call in model.randomness.draws()]
    assert whats == [
        "`nn.Conv2d` initialises its weights at random",
        "the `DataLoader` shuffles (`shuffle=True`)",
        "`np.random.permutation` draws random numbers",
    ]


def test_seeds_are_told_from_draws_and_seeded_generators_count():
    model, _ = _model(
        """
        import random
        import numpy as np
        import lightning as L

        L.seed_everything(1)
        rng = np.random.default_rng(0)
        random.seed(3)
        g.manual_seed(4)
        fresh = np.random.default_rng()
        """,
        "randomness",
    )
    assert [call.what for call in model.randomness.seeds()] == [
        "lightning.seed_everything", "numpy.random.default_rng", "random.seed", "g.manual_seed"]
    assert [call.what for call in model.randomness.draws()] == ["`np.random.default_rng` draws random numbers"]


def test_seeds_within_a_function_follow_its_same_file_calls():
    model, module = _model(
        """
        import torch

        def _torch_part(s):
            torch.manual_seed(s)

        def seed_all(s):
            _torch_part(s)

        def unrelated():
            pass

        if __name__ == "__main__":
            seed_all(0)
        """,
        "randomness",
    )
    seed_all, unrelated = module.body[2], module.body[3]
    assert len(model.randomness.within(seed_all, "seed")) == 1
    assert model.randomness.within(unrelated, "seed") == []
    assert model.randomness.main_guard is module.body[4]


def test_a_scheduler_is_known_by_its_constructor_or_the_optimizer_it_is_handed():
    model, _ = _model(
        """
        import torch
        from .sched import Warmup
        from diffusers import DDPMScheduler

        opt = torch.optim.SGD(params, lr=0.1)
        a = torch.optim.lr_scheduler.StepLR(opt, 10)
        b = Warmup(opt, 100)
        c = DDPMScheduler(num_train_timesteps=10)
        a.step()
        b.step()
        c.step()
        """,
        "names", "optimizers", "events",
    )
    steps = [event for event in model.events.of_kind("step") if isinstance(event, Step)]
    assert [is_lr_scheduler(step.candidates[0], model.names, model.optimizers) for step in steps] == [True, True, False]


def test_grad_inputs_tell_a_loader_batch_and_a_frozen_embedding_from_an_activation():
    model, module = _model(
        """
        import torch
        from torch import nn
        from torch.utils.data import DataLoader

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.emb.weight.requires_grad = False
                self.proj = nn.Linear(4, 4)

            def forward(self, ids):
                frozen = self.emb(ids)
                live = self.proj(frozen)
                return frozen, live

        for x, y in DataLoader(ds):
            batch = x.to("cuda")
        """,
        "names", "values",
    )
    inputs = GradInputs(module, model.names, model.values, model.imports)
    cls = module.body[3]
    forward = cls.body.body[1]
    returned = forward.body.body[2].body[0].value
    frozen, live = (element.value for element in returned.elements)
    assert inputs.without_grad(frozen, forward, cls) == "the output of the frozen embedding `self.emb`"
    assert inputs.without_grad(live, forward, cls) is None
    loop = module.body[4]
    moved = loop.body.body[0].body[0].value  # `x.to("cuda")`: a move of the loop's batch
    assert inputs.without_grad(moved, None, None) == "a batch drawn from the data loader"


def test_a_scheduler_is_known_by_what_the_code_shows_it_holds_never_by_its_name():
    model, _ = _model(
        """
        import torch
        from torch.optim.lr_scheduler import LRScheduler, StepLR

        def make_policy(opt):
            return StepLR(opt, 10)

        def loop(opt, sched, scheduler, lr_scheduler, typed: LRScheduler):
            policy = make_policy(opt)
            policy.step()
            sched.step()
            scheduler.step()
            lr_scheduler.step()
            typed.step()

        opt = torch.optim.SGD(params, lr=0.1)
        loop(opt, StepLR(opt, 5), JobQueue(), unknown, None)
        """,
        "names", "optimizers", "events", "summaries",
    )
    steps = [event for event in model.events.of_kind("step") if isinstance(event, Step)]
    known = [is_lr_scheduler(step.candidates[0], model.names, model.optimizers, model.summaries) for step in steps]
    # built by a helper, passed by the file's call, a job queue, unknown, annotated
    assert known == [True, True, False, False, True]
    make_policy = model.summaries.of(next(iter(model.names.returns)))
    assert make_policy.returned.role == "lr_scheduler"


def test_the_run_is_seeded_by_call_targets_and_an_unseen_import_only_breaks_the_tie():
    from stabfix.model.domain.seeding import run_is_seeded

    def seeded(source: str) -> bool:
        model, _ = _model(source, "randomness")
        return run_is_seeded(model.randomness, None)

    assert seeded("import lightning as L\nL.seed_everything(1)\n")
    assert seeded("from accelerate.utils import set_seed as fix\nfix(1)\n")
    # the file's own `set_seed` that seeds nothing, and a seed read from a config, are not seeding
    assert not seeded("import os\ndef set_seed(s):\n    os.environ['PYTHONHASHSEED'] = str(s)\nset_seed(1)\n")
    assert not seeded("seed = cfg.get_seed()\nprint(seed)\n")
    # imported from a package this analysis cannot read: the name breaks the tie, and only a seeding name
    assert seeded("from mytools.repro import set_global_seed\nset_global_seed(1)\n")
    assert not seeded("from mytools.repro import prepare\nprepare(1)\n")
    assert seeded("from toolkit import Base\nclass R(Base):\n    def run(self):\n        self.set_seed(1)\nR().run()\n")


def test_a_seed_counts_only_where_the_run_reaches_it():
    from stabfix.model.domain.seeding import run_is_seeded

    def seeded(source: str) -> bool:
        model, _ = _model(source, "randomness")
        return run_is_seeded(model.randomness, None)

    unused = "import torch\ndef reseed():\n    torch.manual_seed(0)\n"
    assert not seeded(unused + "print(1)\n"), "a function nothing calls seeds no run"
    assert seeded(unused + "if __name__ == '__main__':\n    reseed()\n")
    # reached through another function, a class and its method, a callback handed over by name
    assert seeded(unused + "def main():\n    reseed()\nmain()\n")
    assert not seeded(unused + "def main():\n    reseed()\nprint(1)\n")
    assert seeded("import torch\nclass T:\n    def setup(self):\n        torch.manual_seed(0)\nT().setup()\n")
    assert seeded(unused + "run(callback=reseed)\n")
    # a decorated function may be registered and run by its decorator (a CLI command)
    assert seeded("import torch\n@app.command()\ndef train():\n    torch.manual_seed(0)\napp()\n")
    # an imported seeding call of an unreached function is no seed either
    assert not seeded("from mytools.repro import set_global_seed\ndef unused():\n    set_global_seed(1)\n")


def test_a_manual_seed_method_seeds_only_an_rng_or_an_unknown_receiver_that_agrees():
    from stabfix.model.domain.seeding import run_is_seeded

    def seeded(source: str) -> bool:
        model, _ = _model(source, "randomness")
        return run_is_seeded(model.randomness, None)

    assert seeded("import torch\ng = torch.Generator()\ng.manual_seed(7)\n")
    assert seeded("import torch as t\ngen = t.Generator(device='cpu').manual_seed(3)\n")
    assert seeded("import torch\nclass D:\n    def __init__(self):\n        self.g = torch.Generator()\n"
                  "        self.g.manual_seed(0)\nD()\n")
    assert seeded("from torch.cuda import default_generators as gens\ngens[0].manual_seed(1)\n") is True
    assert seeded("import lightning as L\nfabric = L.Fabric()\nfabric.seed_everything(1)\n")
    assert seeded("import torch\ndef make():\n    return torch.Generator()\ng = make()\ng.manual_seed(7)\n")
    # the code shows the receiver is something else: its method's name decides nothing
    assert not seeded("class Cfg:\n    def manual_seed(self, s):\n        self.s = s\ncfg = Cfg()\ncfg.manual_seed(1)\n")
    assert not seeded("import torch\nlayer = torch.nn.Linear(2, 2)\nlayer.manual_seed(1)\n")
    assert not seeded("opts = {}\nopts.manual_seed(1)\n")
    assert not seeded("def make():\n    return {}\nopts = make()\nopts.manual_seed(1)\n")
    # nothing shows what the receiver is: the tie-break, only when the call agrees (one seed argument)
    assert seeded("def setup(rng, seed):\n    rng.manual_seed(seed)\nsetup(make(), 0)\n")
    assert not seeded("def setup(rng):\n    rng.manual_seed('fixed', 2)\nsetup(make())\n")
    assert not seeded("def setup(rng):\n    rng.manual_seed('fixed')\nsetup(make())\n")
