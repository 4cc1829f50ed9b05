"""The model's binding model: what rules rely on when they follow a value to where it was bound."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model.source.names import Names, build_names


def _model(source: str) -> tuple[cst.Module, Names]:
    module = cst.parse_module(textwrap.dedent(source))
    return module, build_names(module)


def _uses(module: cst.Module, names: Names, name: str) -> list[cst.Name]:
    """Every recorded use of `name`, in source order."""
    found = [node for node in names.uses if node.value == name]
    return sorted(found, key=lambda node: names.uses[node].order)


def _code(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module(body=[]).code_for_node(node)


def test_tuple_unpacking_binds_each_name_to_its_element():
    module, names = _model(
        """
        def step(batch):
            x, (y, mask) = batch["x"], (batch["y"], None)
            return x, y, mask
        """
    )
    last = {name: _uses(module, names, name)[-1] for name in ("x", "y", "mask")}
    assert _code(names.single_value(last["x"])) == 'batch["x"]'
    assert _code(names.single_value(last["y"])) == 'batch["y"]'
    assert _code(names.single_value(last["mask"])) == "None"


def test_unpacking_a_call_keeps_the_position_of_each_name():
    module, names = _model(
        """
        def step(batch):
            inputs, target = prepare(batch)
            return target
        """
    )
    (binding,) = names.reaching(_uses(module, names, "target")[-1])
    assert binding.kind == "unpack" and binding.position == (1,)
    assert _code(binding.value) == "prepare(batch)" and binding.bound_value is None


def test_a_rebinding_later_in_the_loop_reaches_an_earlier_use():
    module, names = _model(
        """
        def train(loader):
            hidden = None
            for batch in loader:
                out = model(batch, hidden)
                if out is not None:
                    hidden = out
        """
    )
    use = _uses(module, names, "hidden")[1]  # the argument of model(...)
    assert [_code(b.bound_value) for b in names.reaching(use)] == ["None", "out"]


def test_an_unconditional_rebinding_hides_earlier_bindings():
    module, names = _model(
        """
        def f(t):
            ref = t
            ref = t.clone()
            return ref
        """
    )
    assert _code(names.single_value(_uses(module, names, "ref")[-1])) == "t.clone()"


def test_a_rebinding_earlier_in_the_same_branch_hides_the_bindings_before_the_branch():
    module, names = _model(
        """
        def f(path, mode):
            state = load(path)
            if mode:
                state = {"w": state["w"]}
                use(state)
            use(state)
        """
    )
    in_branch, after = _uses(module, names, "state")[-2:]
    assert _code(names.single_value(in_branch)) == '{"w": state["w"]}'
    assert [_code(b.bound_value) for b in names.reaching(after)] == ["load(path)", '{"w": state["w"]}']


def test_a_one_line_branch_is_a_block_of_its_own():
    module, names = _model(
        """
        def f(path, mode):
            state = load(path)
            if mode: state = {"w": state["w"]}
            use(state)
        """
    )
    after = _uses(module, names, "state")[-1]
    assert [_code(b.bound_value) for b in names.reaching(after)] == ["load(path)", '{"w": state["w"]}']


def test_class_body_names_are_not_visible_in_methods_but_module_names_are():
    module, names = _model(
        """
        scale = 2.0
        class Trainer:
            scale = 1.0
            def step(self):
                return scale
        """
    )
    (binding,) = names.bindings_of(_uses(module, names, "scale")[-1])
    assert _code(binding.bound_value) == "2.0"


def test_global_and_nonlocal_bind_in_the_outer_scope():
    module, names = _model(
        """
        CACHE = None
        def fill():
            global CACHE
            CACHE = {}
        def outer():
            count = 0
            def bump():
                nonlocal count
                count = count + 1
            return count
        """
    )
    assert [_code(b.bound_value) for b in names.module_scope.bindings["CACHE"]] == ["None", "{}"]
    count_use = _uses(module, names, "count")[-1]  # `return count`
    assert [_code(b.bound_value) for b in names.bindings_of(count_use)] == ["0", "count + 1"]


def test_walrus_in_a_comprehension_binds_in_the_function():
    module, names = _model(
        """
        def f(xs):
            ys = [last := x for x in xs]
            return last
        """
    )
    assert [b.kind for b in names.bindings_of(_uses(module, names, "last")[-1])] == ["walrus"]


def test_attributes_on_self_are_collected_across_methods():
    module, names = _model(
        """
        class Trainer:
            def __init__(self, encoder):
                self.cache = {}
                self.encoder = encoder
            def reset(this):
                this.cache = dict()
            @staticmethod
            def helper(other):
                other.cache = None
        """
    )
    (cls,) = [node for node in names.scopes if isinstance(node, cst.ClassDef)]
    assert [_code(b.bound_value) for b in names.attribute_bindings(cls, "cache")] == ["{}", "dict()"]
    assert [b.kind for b in names.attribute_bindings(cls, "encoder")] == ["assign"]


def test_an_attribute_read_sees_what_init_leaves_or_the_binding_before_it_in_its_method():
    module, names = _model(
        """
        class Net:
            def __init__(self, wrap):
                self.head = first()
                self.head = second(self.head)
                if wrap:
                    self.head = third(self.head)

            def forward(self, x):
                return self.head(x)

            def reset(self):
                self.head = fourth()
        """
    )
    (cls,) = [node for node in names.scopes if isinstance(node, cst.ClassDef)]
    selves = _uses(module, names, "self")
    in_second, in_third, in_forward = selves[2], selves[4], selves[6]

    def reaching(receiver):
        return [_code(b.bound_value) for b in names.attribute_reaching(cls, "head", receiver)]

    assert reaching(in_second) == ["first()"]
    assert reaching(in_third) == ["second(self.head)"]
    assert reaching(in_forward) == ["second(self.head)", "third(self.head)", "fourth()"]


def test_qualified_names_follow_imports_and_plain_aliases():
    module, names = _model(
        """
        import torch.nn.functional as F
        from torch.autograd import Variable as V
        mse = F.mse_loss
        def step(pred, y):
            return mse(pred, y), V(y), F.l1_loss(pred, y)
        """
    )
    calls = [node for node in _walk(module) if isinstance(node, cst.Call)]
    assert [names.qualify(call.func) for call in calls] == [
        "torch.nn.functional.mse_loss",
        "torch.autograd.Variable",
        "torch.nn.functional.l1_loss",
    ]


def test_a_parameter_shadows_an_import_of_the_same_name():
    module, names = _model(
        """
        import torch.nn.functional as F
        def step(x, F):
            return F.relu(x)
        """
    )
    (call,) = [node for node in _walk(module) if isinstance(node, cst.Call)]
    assert names.qualify(call.func) is None


def _walk(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return True

    module.visit(Collect())
    return found


def test_bindings_under_no_grad_blocks_and_decorators_are_marked():
    module, names = _model(
        """
        import torch
        from torch import inference_mode as im

        @torch.no_grad()
        def encode(model, x):
            emb = model(x)
            return emb

        def step(model, x):
            out = model(x)
            with torch.no_grad():
                teacher = model(x)
            with im(False):
                again = model(x)
            with torch.set_grad_enabled(False):
                frozen = model(x)
            with im():
                probs = [model(t) for t in x]
            return out, teacher, again, frozen, probs
        """
    )
    off = {b.name: b.grad_off for b in names.all_bindings() if b.kind == "assign"}
    assert off == {"emb": True, "out": False, "teacher": True, "again": False, "frozen": True, "probs": True}


def test_decorators_made_to_turn_autograd_off_turn_it_off():
    module, names = _model(
        """
        import functools
        import torch
        from project.utils import smart_inference_mode, profile_step

        def autograd_off(fast=True):
            def decorate(fn):
                return (torch.inference_mode if fast else torch.no_grad)()(fn)
            return decorate

        def no_grad_factory():
            return torch.no_grad()

        def timed(fn):
            @functools.wraps(fn)
            def inner(*a):
                with torch.no_grad():
                    pass
                return fn(*a)
            return inner

        @autograd_off()
        def a(model, x):
            pa = model(x)

        @no_grad_factory()
        def b(model, x):
            pb = model(x)

        @smart_inference_mode()
        def c(model, x):
            pc = model(x)

        @timed
        def d(model, x):
            pd = model(x)

        @profile_step()
        def e(model, x):
            pe = model(x)
        """
    )
    off = {b.name: b.grad_off for b in names.all_bindings() if b.kind == "assign"}
    assert off == {"pa": True, "pb": True, "pc": True, "pd": False, "pe": False}


def test_a_name_read_in_its_own_rebinding_sees_the_previous_value():
    module, names = _model(
        """
        def run(cell, xs, h):
            for x in xs:
                h = cell(x, h)
            return h
        """
    )
    (call,) = [node for node in _walk(module) if isinstance(node, cst.Call)]
    argument = call.args[1].value  # the `h` inside `cell(x, h)`
    assert [b.kind for b in names.reaching(argument)] == ["param", "assign"]  # the parameter, or the last iteration
    assert names.uses[argument].order < names.bindings_of(argument)[-1].order  # read before the rebinding


def test_a_methods_instance_is_its_first_parameter_whatever_its_name():
    module, names = _model(
        """
        class Trainer:
            def __init__(this, net):
                this.net = net

            def step(this, other, x):
                return this.net(x), other.net(x)

            @staticmethod
            def export(self, path):
                return self.net

            @classmethod
            def build(cls, net):
                return cls.net
        """
    )
    trainer = module.body[0]
    reads = {_code(node): node for node in _attributes(module)}
    assert names.receiver_class(_uses(module, names, "this")[-1]) is trainer
    assert [_code(b.value) for b in names.self_attribute_bindings(reads["this.net"])] == ["net"]
    assert names.self_attribute_bindings(reads["other.net"]) == []  # another parameter is not the instance
    assert names.receiver_class(_uses(module, names, "self")[-1]) is None  # a staticmethod has no instance
    assert names.self_attribute_bindings(reads["self.net"]) == []
    assert names.receiver_class(_uses(module, names, "cls")[-1]) is None  # a classmethod's first is the class


def _attributes(module: cst.Module) -> list[cst.Attribute]:
    found: list[cst.Attribute] = []

    class _Attributes(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            found.append(node)

    module.visit(_Attributes())
    return found
