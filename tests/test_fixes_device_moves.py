"""The device-move codemods shared by rules' fixes."""

from __future__ import annotations

import libcst as cst

from stabfix.fixes.device_moves import cpu_copy, has_map_location, move_back, with_map_location


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _no_imports(expr: cst.BaseExpression) -> None:
    return None


def test_a_cpu_copy_replaces_the_snapshot_and_the_final_device_move():
    value = cst.parse_expression("emb.to(device, dtype=torch.float16).clone().detach()")
    assert _code(cpu_copy(value, _no_imports)) == 'emb.detach().to("cpu", dtype=torch.float16, copy=True)'
    value = cst.parse_expression("emb.detach().to(device, dtype=torch.float16)")
    assert _code(cpu_copy(value, _no_imports)) == 'emb.detach().to("cpu", dtype=torch.float16, copy=True)'


def test_a_read_moves_back_and_a_clone_becomes_a_copying_move():
    assert _code(move_back(cst.parse_expression("c[k]"), "device")) == "c[k].to(device, non_blocking=True)"
    assert _code(move_back(cst.parse_expression("v.clone()"), "self.device")) == (
        "v.to(self.device, non_blocking=True, copy=True)"
    )


def test_map_location_is_added_only_where_missing():
    call = cst.parse_expression("torch.load(path)")
    assert isinstance(call, cst.Call) and not has_map_location(call)
    assert _code(with_map_location(call)) == 'torch.load(path, map_location="cpu")'
    for spelled in ('torch.load(path, "cpu")', "torch.load(path, map_location=dev)", "torch.load(path, **kw)"):
        loaded = cst.parse_expression(spelled)
        assert isinstance(loaded, cst.Call) and has_map_location(loaded)


def _fixed_by_sf102(source: str) -> str:
    from stabfix.catalog import load_catalog
    from stabfix.checkers import checker_classes
    from stabfix.fixer import fix_text

    return fix_text(source, "bank.py", [checker_classes()["SF102"]], load_catalog(), unsafe=True).text


_NEUTRAL_DEVICE_ATTRIBUTE = '''import torch


class Bank:
    def __init__(self, encoder):
        self.encoder = encoder
        self.where = next(encoder.parameters()).device
        self.rows = {}

    @torch.no_grad()
    def add(self, key, x):
        self.rows[key] = self.encoder(x).detach()

    def lookup(self, key):
        return self.rows[key]
'''


def test_a_read_moves_back_to_an_attribute_bound_to_a_device_whatever_its_name():
    fixed = _fixed_by_sf102(_NEUTRAL_DEVICE_ATTRIBUTE)
    assert "return self.rows[key].to(self.where, non_blocking=True)" in fixed


_HOST_NAMED_DEVICE_LOCAL = '''import torch


class Bank:
    def __init__(self, encoder):
        self.encoder = encoder
        self.device = torch.device("cuda")
        self.rows = {}

    @torch.no_grad()
    def add(self, key, x):
        self.rows[key] = self.encoder(x.to(self.device)).detach()

    def lookup(self, key):
        device = torch.device("cpu")
        print("lookup on", device)
        return self.rows[key]
'''


def test_a_read_never_moves_back_to_a_local_spelled_device_that_holds_the_host():
    fixed = _fixed_by_sf102(_HOST_NAMED_DEVICE_LOCAL)
    assert "return self.rows[key].to(self.device, non_blocking=True)" in fixed


_NEUTRAL_DEVICE_PARAMETER = '''import torch


class Bank:
    def __init__(self, encoder):
        self.encoder = encoder
        self.rows = {}

    @torch.no_grad()
    def add(self, key, x):
        self.rows[key] = self.encoder(x).detach()

    def lookup(self, key, query, where):
        return self.rows[key] @ query.to(where)
'''


def test_a_read_moves_back_to_a_parameter_the_reader_moves_tensors_to():
    fixed = _fixed_by_sf102(_NEUTRAL_DEVICE_PARAMETER)
    assert "return self.rows[key].to(where, non_blocking=True) @ query.to(where)" in fixed
