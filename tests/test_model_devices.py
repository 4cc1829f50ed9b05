"""What a device expression names (`devices.DeviceKinds`), and what rules conclude from it through the model."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.flow.values import Values
from stabfix.model.source.names import build_names
from stabfix.model.source.traversal import MergedVisitor


def _last_return(module: cst.Module) -> cst.BaseExpression:
    returns: list[cst.Return] = []

    class Collect(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            returns.append(node)

    module.visit(Collect())
    assert returns[-1].value is not None
    return returns[-1].value


def _device_kind(source: str) -> str | None:
    """What the device handed to the `.to(...)` of the source's last `return` names."""
    module = cst.parse_module(textwrap.dedent(source))
    moved = _last_return(module)
    assert isinstance(moved, cst.Call) and isinstance(moved.func, cst.Attribute) and moved.func.attr.value == "to"
    return DeviceKinds(build_names(module)).kind(moved.args[0].value)


_CLASS = """
    import torch

    class Runner:
        def __init__(self, cfg, device=None):
            self.cfg = cfg
            self.given = device
{members}
        def put(self, x):
            return x.to({device})
"""


@pytest.mark.parametrize(
    "members, device, kind",
    [
        ("    def _resolved_device(self):\n        return torch.device('cuda:0')\n", "self._resolved_device()", "accelerator"),
        ("    def _resolved_device(self):\n        return 'cpu'\n", "self._resolved_device()", "host"),
        ("    @property\n    def device(self):\n        return torch.device('cpu')\n", "self.device", "host"),
        ("    @property\n    def device(self):\n        return 'cuda'\n", "torch.device(self.device)", "accelerator"),
        (
            "    def _resolved_device(self):\n        if torch.cuda.is_available():\n            return 'cuda'\n        return 'cpu'\n",
            "self._resolved_device()",
            None,  # either, at run time: not proof of the host
        ),
        ("", "self.cfg.device", None),  # a config field: a device expression the code does not spell
        ("", "self.given", None),  # an argument
        ("", "'cuda' if torch.cuda.is_available() else 'cpu'", None),
        ("", "0", "accelerator"),
    ],
)
def test_a_device_is_followed_through_methods_properties_and_bindings(members, device, kind):
    source = _CLASS.replace("{members}", textwrap.indent(members, "    ")).replace("{device}", device)
    assert _device_kind(source) == kind


def test_a_property_is_read_through_the_instance_a_method_receives_whatever_its_name():
    source = """
        import torch

        class Runner:
            @property
            def device(this):
                return torch.device("cpu")

            def put(this, x):
                return x.to(this.device)

            @staticmethod
            def put_static(this, x):
                return x.to(this.device)
    """
    assert _device_kind(source) is None  # a static method's first parameter is no instance
    assert _device_kind(source.rsplit("    @staticmethod", 1)[0]) == "host"


def test_a_module_level_helper_and_a_name_bound_from_it_are_followed():
    source = """
        import torch

        def pick_device():
            return torch.device("cpu")

        def stash(x):
            dev = pick_device()
            return x.to(dev)
    """
    assert _device_kind(source) == "host"
    assert _device_kind(source.replace('"cpu"', '"cuda"')) == "accelerator"


def _value_of_last_return(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    return Values(build_names(module)).value_of(_last_return(module))


def test_a_tensor_moved_to_a_method_device_that_is_the_cpu_is_host_memory():
    host = _value_of_last_return(
        """
        import torch

        class Cache:
            def _store_device(self):
                return torch.device("cpu")

            def put(self, emb):
                return emb.detach().to(self._store_device())
        """
    )
    assert host.host and not host.placed
    config = _value_of_last_return(
        """
        def put(emb, cfg):
            return emb.detach().to(cfg.device)
        """
    )
    assert config.placed and not config.host  # a config device is the device the program works on


def test_a_factory_on_a_device_a_helper_returns_as_the_cpu_is_no_device_tensor():
    value = _value_of_last_return(
        """
        import torch

        def host():
            return "cpu"

        def buffer(n):
            return torch.zeros(n, device=host())
        """
    )
    assert not value.placed


def test_a_value_moved_to_a_device_and_then_called_is_a_module():
    module = cst.parse_module(
        textwrap.dedent(
            """
            class Embedder:
                def __init__(self, cfg):
                    self.net = load_backbone(cfg).to(cfg.device)
                    self.table = make_table(cfg).to("cpu")
                    self.ids = tokens.to(cfg.device)

                def run(self, x):
                    return self.net(x), self.table(x), self.ids[0]
            """
        )
    )
    model = FileModel(("values",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    assert model.modules is not None
    spelled = {name: cst.parse_expression(name) for name in ("self.net", "self.table", "self.ids")}
    assert model.modules.is_module(spelled["self.net"])
    assert not model.modules.is_module(spelled["self.table"])  # moved to the host: its outputs stay there
    assert not model.modules.is_module(spelled["self.ids"])  # moved, but never called: a tensor


def test_an_attribute_of_an_instance_built_in_the_file_is_followed_to_its_class():
    source = """
        import torch

        class Placement:
            def __init__(self):
                self.where = torch.device("cpu")

        placement = Placement()

        def stash(x):
            return x.to(placement.where)
    """
    assert _device_kind(source) == "host"
    assert _device_kind(source.replace('"cpu"', '"cuda"')) == "accelerator"
    assert _device_kind(source.replace("placement = Placement()", "placement = make()")) is None  # not built here


def _moves(source: str) -> tuple[DeviceKinds, list[cst.Call]]:
    module = cst.parse_module(textwrap.dedent(source))
    calls: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cpu", "cuda"):
                calls.append(node)

    module.visit(Collect())
    return DeviceKinds(build_names(module)), calls


def test_host_and_accelerator_moves_are_decided_by_the_bound_device_not_its_name():
    devices, (to_home, to_named_host, to_bound_accelerator, to_unknown_host_word) = _moves(
        """
        import torch

        home = torch.device("cpu")
        cpu_dev = torch.device("cuda", 0)

        def f(x, offload_to):
            return x.to(home), x.to(cpu_dev), x.to(device=cpu_dev), x.to(offload_to)
        """
    )
    assert devices.moves_to_host(to_home) and not devices.moves_to_accelerator(to_home)
    assert devices.move_target(to_named_host)[0] == "device"
    assert devices.moves_to_accelerator(to_named_host) and not devices.moves_to_host(to_named_host)
    assert devices.moves_to_accelerator(to_bound_accelerator)
    # a parameter: the code does not show it, so its name breaks the tie (docs/model.md, "Where a name still decides")
    assert devices.moves_to_host(to_unknown_host_word)


def test_a_module_moved_to_a_device_bound_to_the_host_is_not_taken_for_a_moved_module():
    module = cst.parse_module(
        textwrap.dedent(
            """
            import torch

            home = torch.device("cpu")
            cpu_dev = torch.device("cuda")

            class Embedder:
                def __init__(self, cfg):
                    self.table = make_table(cfg).to(home)
                    self.net = load_backbone(cfg).to(cpu_dev)

                def run(self, x):
                    return self.net(x), self.table(x)
            """
        )
    )
    model = FileModel(("values",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    assert model.modules is not None
    assert model.modules.is_module(cst.parse_expression("self.net"))
    assert not model.modules.is_module(cst.parse_expression("self.table"))


def test_a_name_bound_to_a_torch_dtype_is_a_cast_whatever_it_is_called():
    devices, (to_precision, to_either, to_parameter) = _moves(
        """
        import torch

        precision = torch.bfloat16
        either = torch.float16 if fast else torch.float32

        def f(x, target):
            return x.to(precision), x.to(either), x.to(target)
        """
    )
    assert devices.move_target(to_precision)[0] == "dtype" and not devices.moves_to_accelerator(to_precision)
    assert devices.move_target(to_either)[0] == "dtype"
    assert devices.move_target(to_parameter)[0] == "device"  # not shown: a `.to(x)` of a device is the reading kept


_HOLDERS = """
    import torch

    def run(x, where, count, spot):
        here = x.device
        other = here if count else torch.device("cuda", 1)
        y = x.to(where)
        z = x.to(spot)
        w = z.cpu().to(spot)
        return here, other, where, count, spot, y
"""


def test_a_value_holds_a_device_by_what_is_bound_to_it_or_what_its_function_moves_to():
    module = cst.parse_module(textwrap.dedent(_HOLDERS))
    devices = DeviceKinds(build_names(module))
    returned = _last_return(module)
    assert isinstance(returned, cst.Tuple)
    here, other, where, count, spot, moved = (element.value for element in returned.elements)
    assert devices.holds_a_device(here)  # another tensor's `.device`
    assert devices.holds_a_device(other)  # both branches hold one
    assert devices.holds_a_device(where)  # a parameter the function moves tensors to
    assert not devices.holds_a_device(count)  # a parameter never used as a device
    assert devices.holds_a_device(spot)  # moved to twice, never to the host through it
    assert not devices.holds_a_device(moved)  # a tensor, not a device


def test_a_name_moved_to_the_host_through_it_is_not_used_as_a_device():
    module = cst.parse_module(textwrap.dedent("""
        def run(x, spot):
            return x.to(spot)
        spot = "cpu"
    """))
    devices = DeviceKinds(build_names(module))
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    assert devices.used_as_device(function, "spot")
    host = cst.parse_module('def run(x):\n    spot = "cpu"\n    return x.to(spot)\n')
    assert not DeviceKinds(build_names(host)).used_as_device(host.body[0], "spot")
