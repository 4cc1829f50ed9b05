"""The numerics helpers: log_softmax and gather calls, constants through names, guarded divisors, precision."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model.calls import numeric_guards, numerics
from stabfix.model.source.names import Names, build_names
from stabfix.model.source.syntax import walk


def _parse(source: str) -> tuple[cst.Module, Names]:
    module = cst.parse_module(textwrap.dedent(source))
    return module, build_names(module)


def _code(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module(body=[]).code_for_node(node)


def _calls(module: cst.Module, attr: str) -> list[cst.Call]:
    found = [n for n in walk(module) if isinstance(n, cst.Call) and _code(n.func).endswith(attr)]
    return sorted(found, key=lambda call: _code(call))


def _value_of(module: cst.Module, target: str) -> cst.BaseExpression:
    for node in walk(module):
        if isinstance(node, cst.Assign) and _code(node.targets[0].target) == target:
            return node.value
    raise AssertionError(target)


def test_log_softmax_is_found_through_an_alias_a_name_and_a_module_on_self():
    module, names = _parse(
        """
        import torch.nn.functional as fn
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                self.lsm = nn.LogSoftmax(dim=2)

            def forward(self, logits, ids):
                lp = fn.log_softmax(logits, -1, dtype=torch.float32)
                a = lp.gather(-1, ids)
                b = self.lsm(logits).gather(2, ids)
                c = logits.log_softmax(dim=-1).take_along_dim(ids, dim=-1)
        """
    )
    gathers = [numerics.gather_of(call, names) for call in _calls(module, "gather") + _calls(module, "take_along_dim")]
    found = {(_code(g.source), g.function): numerics.log_softmax_of(g.source, names) for g in gathers if g}
    lp = found[("lp", "gather")]
    assert _code(lp.operand) == "logits" and _code(lp.dim) == "-1" and lp.casts
    module_call = found[("self.lsm(logits)", "gather")]
    assert _code(module_call.operand) == "logits" and _code(module_call.dim) == "2" and not module_call.casts
    method = found[("logits.log_softmax(dim=-1)", "take_along_dim")]
    assert _code(method.dim) == "-1"


def test_gather_forms_and_a_distributed_gather_is_not_a_tensor_gather():
    module, names = _parse(
        """
        import torch
        import torch.distributed as dist
        from torch import gather as pick

        a = torch.gather(src, 1, idx)
        b = pick(src, dim=-1, index=idx)
        c = torch.take_along_dim(src, idx, dim=2)
        dist.gather(t, gather_list, dst=0)
        """
    )
    forms = {}
    for node in walk(module):
        if isinstance(node, cst.Call):
            gather = numerics.gather_of(node, names)
            if gather is not None:
                forms[_code(node.func)] = (_code(gather.source), _code(gather.dim), _code(gather.index))
    assert forms == {
        "torch.gather": ("src", "1", "idx"),
        "pick": ("src", "-1", "idx"),
        "torch.take_along_dim": ("src", "2", "idx"),
    }


def test_dims_are_equal_only_when_certain():
    def dim(text):
        return cst.parse_expression(text)

    assert numerics.dims_equal(dim("-1"), dim("-1"))
    assert numerics.dims_equal(dim("d"), dim("d"))
    assert not numerics.dims_equal(dim("2"), dim("-1"))  # the rank is not known
    assert not numerics.dims_equal(dim("-1"), None)


def test_constants_follow_module_names_parameter_defaults_and_self_attributes():
    module, names = _parse(
        """
        EPS = 1e-4 * 1e-4

        class M:
            def __init__(self, eps=1e-12):
                self.eps = eps

            def f(self, x, tol=10 ** -9, other=None):
                a = EPS
                b = self.eps
                c = tol
                d = other
                e = self.config.eps
        """
    )
    values = {t: numerics.constant_of(_value_of(module, t), names) for t in "abcde"}
    assert abs(values["a"] - 1e-8) < 1e-20 and values["b"] == 1e-12 and abs(values["c"] - 1e-9) < 1e-20
    assert values["d"] is None and values["e"] is None
    assert numerics.is_tiny_epsilon(1e-8) and not numerics.is_tiny_epsilon(1e-7) and not numerics.is_tiny_epsilon(0.0)


def test_guarded_divisors_and_what_they_measure():
    module, names = _parse(
        """
        import torch

        rms = out.pow(2).mean(-1, keepdim=True).sqrt()
        a = t / (rms + 1e-8)
        b = x / torch.sqrt(var + 1e-10)
        c = x * (ms + 1e-8).rsqrt()
        d = s / (mask.sum() + 1e-8)
        e = x / (x.abs().amax() + 1e-8)
        f = x / (1e-8 + x.var(-1))
        """
    )
    found = {}
    for target in "abcdef":
        value = _value_of(module, target)
        root = "rsqrt" if target == "c" else "sqrt"
        guard = numeric_guards.guarded_divisor(value.right, names, root)
        found[target] = None if guard is None else (_code(guard.measured), guard.squared, guard.under_sqrt)
    assert found == {
        "a": ("out", False, False),
        "b": ("var", True, True),
        "c": ("ms", True, True),
        "d": None,  # a count, not a magnitude
        "e": ("x", False, False),
        "f": ("x", True, False),
    }


def test_scale_like_numerators_and_shared_roots():
    module, names = _parse(
        """
        a_rms = a.pow(2).mean().sqrt()
        b_rms = b.norm()
        combined = 0.5 * (a_rms + b_rms)
        centred = x - x.mean()
        """
    )
    combined = _value_of(module, "combined").left  # the 0.5
    assert numeric_guards.scale_like(cst.parse_expression("1.0"), names)
    assert numeric_guards.scale_like(_value_of(module, "combined"), names)
    assert not numeric_guards.scale_like(_value_of(module, "centred"), names)
    assert numerics.constant_of(combined, names) == 0.5


def test_autocast_dtype_and_half_casts():
    module, names = _parse(
        """
        import torch
        from torch.cuda.amp import autocast

        w1 = torch.autocast("cuda")
        w2 = torch.autocast("cpu")
        w3 = torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        w4 = autocast()
        w5 = torch.amp.autocast("cuda", dtype=torch.float16)
        h = x.half()
        """
    )
    dtypes = [numeric_guards.autocast_dtype(_value_of(module, f"w{i}"), names) for i in range(1, 6)]
    assert dtypes == ["float16", "bfloat16", "bfloat16", "float16", "float16"]
    assert numeric_guards.made_half(_value_of(module, "h"), names)


def test_what_tames_a_quotient_and_what_guards_it():
    module, names = _parse(
        """
        import math
        import torch

        a = torch.log10(r / (m + 1e-10))
        b = (c / (n + 1e-8)).clamp(min=0.5, max=1.0)
        c = (c / (n + 1e-8)).clamp(min=0.5)
        d = torch.clamp(q, max=1.0)
        e = min(q, 1.0)
        f = math.log(q)
        xc = x - mean
        g = w * xc
        """
    )
    calls = {t: _value_of(module, t) for t in "abcdef"}
    assert numeric_guards.is_logarithm(calls["a"], names) and numeric_guards.is_logarithm(calls["f"], names)
    assert _code(numeric_guards.bounds_above(calls["b"], names)) == "(c / (n + 1e-8))"
    assert numeric_guards.bounds_above(calls["c"], names) is None  # a lower clamp bounds nothing above
    assert _code(numeric_guards.bounds_above(calls["d"], names)) == "q"
    assert _code(numeric_guards.bounds_above(calls["e"], names)) == "q"
    assert numeric_guards.centred(_value_of(module, "g"), names)
    assert not numeric_guards.centred(cst.parse_expression("x * y"), names)
    norm = cst.parse_expression("norm")
    assert numeric_guards.exceeds(cst.parse_expression("norm > eps"), norm)
    assert numeric_guards.exceeds(cst.parse_expression("ok and 0.9 < norm"), norm)
    assert not numeric_guards.exceeds(cst.parse_expression("norm < eps"), norm)


def test_a_last_dim_softmax_and_a_positive_gather_dim_may_be_one_axis():
    module, names = _parse(
        """
        import torch

        a = torch.gather(lp, 2, labels.unsqueeze(2))
        b = torch.gather(lp, 2, labels.unsqueeze(-1))
        c = torch.gather(lp, 1, idx.expand(-1, 1, v))
        d = lp.gather(2, labels[:, :, None])
        """
    )
    minus_one = cst.parse_expression("-1")
    found = {t: numerics.maybe_same_dim(minus_one, numerics.gather_of(_value_of(module, t), names)) for t in "abcd"}
    assert found == {"a": True, "b": True, "c": False, "d": True}


def test_host_number_reads_and_full_precision_casts():
    module, names = _parse(
        """
        import torch
        a = float((x / y).detach().cpu())
        b = (x / y).item()
        c = torch.float(x)
        d = float(x.detach().cpu().numpy())
        e = x.float().abs().mean()
        f = x.to(torch.float32).norm()
        g = x.half().abs().mean()
        h = x.to(torch.bfloat16).abs().mean()
        n = torch.linalg.norm(y.float(), dim=-1)
        i = n + 1e-8
        j = (x / i).mean().item()
        """
    )
    outer = {_code(_value_of(module, t)): t for t in "abcd"}
    read = {t: _code(numeric_guards.host_number_of(_value_of(module, t), names)) for t in outer.values()}
    assert read == {"a": "(x / y)", "b": "(x / y)", "c": None, "d": "x.detach().cpu().numpy()"}
    precise = {t: numeric_guards.made_full_precision(_value_of(module, t), names) for t in "efghi"}
    assert precise == {"e": True, "f": True, "g": False, "h": False, "i": True}
    assert _code(numeric_guards.host_number_of(_value_of(module, "j"), names)) == "(x / i).mean()"  # reduced first


def test_a_division_spelled_as_a_call_and_a_root_spelled_as_pow():
    module, names = _parse(
        """
        import torch
        from torch import div as d

        rms = torch.pow(torch.mean(w.square(), dim=1), 0.5)
        a = torch.div(1, rms + 1e-8)
        b = d(x, other=rms + 1e-8)
        c = x.div(s.pow(0.5) + 1e-8)
        e = torch.pow(x, 2)
        f = opt.div(3)
        """
    )
    operands = {}
    for target in "abcf":
        value = _value_of(module, target)
        found = numerics.division_operands(value, names)
        operands[target] = None if found is None else tuple(_code(part) for part in found)
    assert operands == {"a": ("1", "rms + 1e-8"), "b": ("x", "rms + 1e-8"), "c": ("x", "s.pow(0.5) + 1e-8"), "f": ("opt", "3")}
    assert numerics.division_operands(_value_of(module, "e"), names) is None  # a power, not a division
    guard = numeric_guards.guarded_divisor(cst.ensure_type(_value_of(module, "a"), cst.Call).args[1].value, names, "sqrt")
    assert guard is not None and _code(guard.measured) == "w"  # the RMS of w, through torch.pow(..., 0.5)
    guard = numeric_guards.guarded_divisor(cst.ensure_type(_value_of(module, "c"), cst.Call).args[0].value, names, "sqrt")
    assert guard is not None and _code(guard.measured) == "s"


def test_half_cast_receiver_reads_every_float16_spelling_and_no_bfloat16():
    module, names = _parse(
        """
        import torch as T
        HALF = T.float16
        a = model.half()
        b = net.to("cuda", T.float16)
        c = enc.to(device=d, dtype=T.half)
        e = gen.type(HALF)
        f = model.to(T.bfloat16)
        g = model.to("cuda")
        h = x.half(1)
        """
    )
    found = {}
    for target in "abcefgh":
        call = _value_of(module, target)
        found[target] = _code(numeric_guards.half_cast_receiver(call, names))
    assert found == {"a": "model", "b": "net", "c": "enc", "e": "gen", "f": None, "g": None, "h": None}


def test_signed_constant_reads_infinities_and_numbers_through_names():
    module, names = _parse(
        """
        import math
        import numpy as np
        import torch
        NEG = float("-inf")
        BIG = -1e9
        a = f(float("-inf"))
        b = f(-float("inf"))
        c = f(-math.inf)
        d = f(-np.inf)
        e = f(NEG)
        g = f(BIG)
        h = f(torch.finfo(x.dtype).min)
        i = f(float(s))
        """
    )
    values = {t: numerics.signed_constant(_value_of(module, t).args[0].value, names) for t in "abcdeghi"}
    ninf = float("-inf")
    assert values == {"a": ninf, "b": ninf, "c": ninf, "d": ninf, "e": ninf, "g": -1e9, "h": None, "i": None}


def test_masks_keep_a_position_when_causal_or_below_the_rows_own_top_values():
    from stabfix.model.calls import masks

    module, names = _parse(
        """
        import torch
        from torch import triu
        future = torch.ones(n, n).triu(1).bool()
        a = f(s, future)
        b = f(s, triu(ones, 1) == 1)
        top, _ = torch.topk(logits, k)
        c = f(logits, logits < top[..., -1:])
        d = f(logits, logits <= top[..., -1:])
        e = f(s, key_padding == 0)
        h = f(logits, other < top[..., -1:])
        j = f(s, self.bias[:, :, :T, :T] == 0)

        class Attention:
            def forward(self, s, T):
                g = f(s, self.bias[:, :, :T, :T] == 0)

            def decode(block, s, T):
                i = f(s, block.bias[:, :, :T, :T] == 0)
        """
    )
    # what the file binds or registers on the instance, by attribute (whatever the receiver is called)
    buffers = {"bias": [cst.parse_expression("torch.tril(torch.ones(8, 8))")]}
    kept = {}
    for target in "abcdeghij":
        call = _value_of(module, target)
        filled, mask = call.args[0].value, call.args[1].value
        kept[target] = masks.keeps_a_position(mask, filled, names, lambda key: buffers.get(key, []))
    # `j`: `self` outside any method is not an instance receiver
    assert kept == {"a": True, "b": True, "c": True, "d": False, "e": False, "g": True, "h": False, "i": True, "j": False}
