"""The model's mixed-precision facts: autocast regions and their dtype, loss scaling, anomaly switches,
legacy `torch.cuda.amp` uses."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _amp(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(["amp"])
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    model.amp.scaling()
    return model.amp


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


def test_dtype_of_explicit_default_and_device_defaults():
    amp = _amp(
        """
        import torch
        from torch.cuda.amp import autocast as ac

        with torch.autocast("cuda", dtype=torch.half): pass
        with torch.autocast("cuda"): pass
        with torch.autocast("cpu"): pass
        with torch.amp.autocast(device_type=dev.type): pass
        with ac(True): pass
        with torch.cpu.amp.autocast(): pass
        with torch.autocast("cuda", torch.bfloat16): pass
        with torch.autocast("cuda", **kwargs): pass
        """
    )
    assert [amp.dtype(region)[0] for region in amp.regions] == [
        "float16", "float16", "bfloat16", "float16", "float16", "bfloat16", "bfloat16", None,
    ]
    assert amp.dtype(amp.regions[1])[1] is None  # the default decides: nothing to point at


def test_dtype_followed_through_a_variable_a_constant_and_a_config_field_to_the_assignment():
    amp = _amp(
        """
        import torch
        from dataclasses import dataclass

        AMP = torch.float16

        @dataclass
        class Cfg:
            amp_dtype: torch.dtype = torch.float16
            other: torch.dtype = torch.bfloat16

        def step(cfg: Cfg, flag):
            local = torch.bfloat16
            with torch.autocast("cuda", dtype=AMP): pass
            with torch.autocast("cuda", dtype=cfg.amp_dtype): pass
            with torch.autocast("cuda", dtype=local): pass
            with torch.autocast("cuda", dtype=torch.float16 if flag else torch.bfloat16): pass
            with torch.autocast("cuda", dtype=cfg.unknown): pass
        """
    )
    found = [amp.dtype(region) for region in amp.regions]
    assert [dtype for dtype, _ in found] == ["float16", "float16", "bfloat16", None, None]
    first_source, second_source = found[0][1], found[1][1]
    assert _code(first_source) == "torch.float16" and _code(second_source) == "torch.float16"
    assert first_source is not second_source  # the module constant and the dataclass field


def test_a_dtype_chosen_by_bfloat16_support_or_looked_up_in_a_table_falls_back_to_float16():
    amp = _amp(
        """
        import torch
        from contextlib import nullcontext

        TABLE = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
        by_support = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
        by_flag = "bfloat16" if use_bf16 else "float16"

        def step(flag):
            with torch.autocast("cuda", dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16): pass
            with torch.autocast("cuda", dtype=TABLE[by_support]): pass
            with torch.autocast("cuda", dtype=TABLE["bfloat16"]): pass
            with torch.autocast("cuda", dtype=TABLE[by_flag]): pass
            with torch.autocast("cuda", dtype=torch.float32 if torch.cuda.is_bf16_supported() else torch.float16): pass
            ctx = nullcontext() if flag else torch.autocast("cuda", dtype=torch.float16)
            with ctx: pass
        """
    )
    found = [amp.dtype(region)[0] for region in amp.regions]
    # the fallback of a support test runs on every GPU without bfloat16; a user's flag or another pair
    # of dtypes is not pinned
    assert found == ["float16", "float16", "bfloat16", None, None, "float16"]
    assert len(amp.entered(amp.regions[-1])) == 1  # entered through the side of a choice that builds it


def test_enabled_only_false_for_a_literal_and_grad_off_regions():
    amp = _amp(
        """
        import torch

        with torch.cuda.amp.autocast(enabled=False): pass
        with torch.cuda.amp.autocast(False): pass
        with torch.autocast("cuda", enabled=cfg.amp): pass
        with torch.no_grad(), torch.autocast("cuda"): pass
        with torch.no_grad():
            with torch.autocast("cuda"): pass
        """
    )
    assert [amp.enabled(region) for region in amp.regions] == [False, False, True, True, True]
    assert [amp.grad_off(region) for region in amp.regions] == [False, False, False, True, True]


def test_scaling_evidence():
    cases = {
        "scaler = torch.amp.GradScaler('cuda')": True,
        "scaler = torch.cuda.amp.GradScaler(enabled=False)": False,
        "scaler.scale(loss).backward()": True,
        "accelerator.backward(loss)": True,
        "loss_scaler(loss, optimizer)": True,
        "loss.backward()": False,
        "self.manual_backward(loss)": True,
    }
    for line, scaled in cases.items():
        assert bool(_amp(f"import torch\n{line}\n").scaling()) is scaled, line


def test_anomaly_switch_modes():
    amp = _amp(
        """
        import torch
        import lightning.pytorch as pl
        from torch.autograd import detect_anomaly

        torch.autograd.set_detect_anomaly(True)
        torch.autograd.set_detect_anomaly(False)
        torch.autograd.set_detect_anomaly(args.debug)
        torch.autograd.anomaly_mode.set_detect_anomaly(mode=True)
        with detect_anomaly(check_nan=False): pass
        pl.Trainer(detect_anomaly=True)
        pl.Trainer(max_epochs=1)
        """
    )
    assert [switch.mode for switch in amp.anomaly] == ["on", "off", "setting", "on", "on", "on"]


def test_legacy_uses_through_imports_aliases_and_decorators_but_not_lookalikes():
    amp = _amp(
        """
        import torch
        import torch.cuda.amp as amp
        from torch.cuda.amp import custom_fwd, autocast as ac
        from apex import amp as apex_amp

        class autocast: ...

        torch.cuda.amp.GradScaler()
        amp.autocast()
        mixed = ac
        mixed(True)
        ctx = torch.cuda.amp.autocast
        autocast()
        torch.amp.autocast("cuda")
        apex_amp.initialize(model, opt)

        @custom_fwd
        def f(ctx, x): ...
        """
    )
    assert [(_code(use.node), use.how) for use in amp.legacy_uses] == [
        ("torch.cuda.amp.GradScaler()", "call"),
        ("amp.autocast()", "call"),
        ("mixed(True)", "call"),
        ("torch.cuda.amp.autocast", "reference"),
        ("custom_fwd", "decorator"),
    ]


def test_version_fallbacks():
    amp = _amp(
        """
        import torch

        def ctx(enabled):
            if torch.__version__ >= "2.4":
                return torch.amp.autocast("cuda", enabled=enabled)
            return torch.cuda.amp.autocast(enabled=enabled)

        def scaler():
            if hasattr(torch.amp, "GradScaler"):
                return torch.amp.GradScaler("cuda")
            else:
                return torch.cuda.amp.GradScaler()

        def plain():
            return torch.cuda.amp.GradScaler()
        """
    )
    assert [amp.in_version_fallback(use) for use in amp.legacy_uses] == [True, True, False]


def test_version_flags_except_fallbacks_probes_and_annotations_are_not_uses_to_port():
    amp = _amp(
        """
        import torch
        from .imports import _TORCH_GREATER_EQUAL_2_4

        a = torch.amp.GradScaler("cuda") if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
        try:
            b = torch.amp.GradScaler(device="cuda")
        except (AttributeError, TypeError):
            b = torch.cuda.amp.GradScaler()
        try:
            _ = torch.cpu.amp.autocast
        except AttributeError:
            pass
        scaler: torch.cuda.amp.GradScaler = make()
        """
    )
    assert [amp.in_version_fallback(use) for use in amp.legacy_uses] == [True, True, True]


def test_no_dtype_in_a_framework_step_inherits_the_framework_autocast():
    amp = _amp(
        """
        from torch import autocast
        from transformers import Trainer

        class T(Trainer):
            def compute_loss(self, model, inputs):
                with autocast("cuda"):
                    return model(**inputs).loss

        def plain(model, inputs):
            with autocast("cuda"):
                return model(**inputs).loss
        """
    )
    assert [amp.dtype(region)[0] for region in amp.regions] == [None, "float16"]


class _Probe(cst.BatchableCSTVisitor):
    """Records the frames and place of every `probe()` call, after the model's parts have seen it."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model
        self.sites: list = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.sites.append((self.model.steps.frames(), self.model.steps.place()))


def _probed(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(["amp"])
    probe = _Probe(model)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor([*model.visitors(), probe])])
    return model.amp, probe.sites


def test_autocast_around_a_site_a_with_block_or_a_decorator_not_a_disabled_one():
    amp, sites = _probed(
        """
        import torch
        from torch.cuda.amp import autocast

        def step(model, x):
            with torch.autocast("cuda", dtype=torch.float16):
                out = model(x)
                probe()
            probe()
            with torch.amp.autocast("cuda", enabled=False):
                probe()

        @autocast()
        def forward(x):
            probe()

        probe()
        """
    )
    around = [amp.autocast_around(frames, place) for frames, place in sites]
    assert [region is not None for region in around] == [True, False, False, True, False]
    assert [region.how for region in around if region is not None] == ["with", "decorator"]


def test_a_same_file_function_called_under_autocast():
    amp, _ = _probed(
        """
        import torch

        def token_logps(logits, labels):
            return logits

        def unrelated(logits):
            return logits

        class Loss:
            def helper(self, x):
                return x

            def __call__(self, x):
                with torch.autocast("cuda"):
                    return self.helper(x)

        def step(model, x, y):
            unrelated(x)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return token_logps(model(x), y)
        """
    )
    functions = {node.name.value: node for node in _functions(amp)}
    assert amp.called_under_autocast(functions["token_logps"]) is not None
    assert amp.called_under_autocast(functions["helper"]) is not None
    assert amp.called_under_autocast(functions["unrelated"]) is None
    assert amp.called_under_autocast(functions["step"]) is None


def _functions(amp):
    return [binding.node for binding in amp.names.all_bindings() if binding.kind == "def"]
