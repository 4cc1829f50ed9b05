"""Where a value goes (`stabfix.model.flow.flows`): what SF107 asks of a `torch.load(...)` result."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.names import build_names


def _destinations(source: str) -> list[tuple[str, bool, str]]:
    module = cst.parse_module(textwrap.dedent(source))
    names = build_names(module)
    flows = ValueFlows(names)
    flows.module = module
    call = next(c for c in flows.calls() if names.qualify(c.func) == "torch.load")
    return [(d.kind, d.whole, cst.Module(body=[]).code_for_node(d.node)) for d in flows.destinations(call)]


def test_entries_of_a_checkpoint_reach_each_load_state_dict_in_source_order():
    found = _destinations(
        """
        import torch
        def resume(model, opt, path):
            ckpt = torch.load(path)
            if "state_dict" in ckpt:
                ckpt = ckpt["state_dict"]
            model.load_state_dict(ckpt["model"])
            opt.load_state_dict(ckpt.get("opt"))
            return ckpt["epoch"]
        """
    )
    restores = [code for kind, _, code in found if kind == "restore"]
    assert restores == ['model.load_state_dict(ckpt["model"])', 'opt.load_state_dict(ckpt.get("opt"))']
    assert ("inspect", True, ' in ckpt') in found  # the membership test (at its ComparisonTarget)
    assert not any(kind == "other" and whole for kind, whole, _ in found)  # only an entry is returned


def test_values_drawn_by_items_and_rebuilt_by_a_comprehension_are_followed():
    found = _destinations(
        """
        import torch
        def load(model, path, device):
            sd = {k[7:]: v for k, v in torch.load(path).items()}
            model.load_state_dict(sd)
            for name, t in torch.load(path).items():
                print(t.to(device))
        """
    )
    kinds = {(kind, code) for kind, _, code in found}
    assert ("restore", "model.load_state_dict(sd)") in kinds


def test_a_helper_returning_the_load_is_followed_to_its_callers():
    found = _destinations(
        """
        import torch
        def read(path):
            return torch.load(path)
        def build(model, path):
            model.load_state_dict(read(path))
        """
    )
    assert found == [("restore", True, "model.load_state_dict(read(path))")]


def test_a_value_stored_on_an_attribute_or_used_directly_is_other():
    found = _destinations(
        """
        import torch
        class A:
            def load(self, path):
                self.table = torch.load(path)
        """
    )
    assert [(kind, whole) for kind, whole, _ in found] == [("other", True)]


def test_restores_into_loss_scalers_and_schedulers_copy_no_tensors():
    module = cst.parse_module(textwrap.dedent(
        """
        import torch
        from torch.optim import lr_scheduler

        def restore(model, opt, helper_scaler, sd):
            built = torch.cuda.amp.GradScaler()
            sched = lr_scheduler.StepLR(opt, 10)
            helper_scaler.scale(sd).backward()
            model.load_state_dict(sd)
            opt.load_state_dict(sd)
            built.load_state_dict(sd)
            sched.load_state_dict(sd)
            helper_scaler.load_state_dict(sd)
        """
    ))
    flows = ValueFlows(build_names(module))
    flows.module = module
    restores = [c for c in flows.calls() if isinstance(c.func, cst.Attribute) and c.func.attr.value == "load_state_dict"]
    owners = {cst.Module(body=[]).code_for_node(c.func.value): flows.restores_no_tensors(c) for c in restores}
    assert owners == {"model": False, "opt": False, "built": True, "sched": True, "helper_scaler": True}


def test_library_restore_functions_restore_through_their_state_dict_argument_only():
    found = _destinations(
        """
        import torch
        from peft import set_peft_model_state_dict
        from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_state_dict
        def resume(model, opt, path):
            ckpt = torch.load(path)
            set_peft_model_state_dict(model, ckpt["adapter"])
            set_model_state_dict(model, model_state_dict=ckpt["model"])
            set_state_dict(model, [opt], model_state_dict=ckpt["model"], optim_state_dict=ckpt["optim"])
            set_peft_model_state_dict(ckpt["adapter"], {})  # in the model's place: not a restore of it
        """
    )
    restores = [code.split("(")[0] for kind, _, code in found if kind == "restore"]
    assert restores == ["set_peft_model_state_dict", "set_model_state_dict", "set_state_dict", "set_state_dict"]
    assert sum(kind == "other" for kind, _, _ in found) == 1


def test_load_state_dict_with_assign_adopts_the_loaded_tensors():
    found = _destinations(
        """
        import torch
        def load(model, head, path, flag):
            ckpt = torch.load(path)
            model.load_state_dict(ckpt["model"], assign=True)
            head.load_state_dict(ckpt["head"], assign=False)
            head.load_state_dict(ckpt["ema"], strict=False, assign=flag)
        """
    )
    assert [(kind, code) for kind, _, code in found] == [
        ("adopt", 'model.load_state_dict(ckpt["model"], assign=True)'),
        ("restore", 'head.load_state_dict(ckpt["head"], assign=False)'),
        ("adopt", 'head.load_state_dict(ckpt["ema"], strict=False, assign=flag)'),
    ]


def test_the_keys_drawn_by_items_are_not_what_was_loaded():
    found = _destinations(
        """
        import torch
        def load(model, path):
            sd = {k.replace("module.", ""): v for k, v in torch.load(path).items()}
            model.load_state_dict(sd)
        """
    )
    assert found == [("restore", False, "model.load_state_dict(sd)")]
