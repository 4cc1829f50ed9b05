"""The model's container facts: which dicts/lists outlive a step, what is stored into them, how each
occurrence is used (read, evicted, cleared, handed over)."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.domain.containers import Containers
from stabfix.model.source.traversal import MergedVisitor


def _containers(source: str) -> Containers:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(("containers",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    assert model.containers is not None
    return model.containers


def test_a_self_attribute_created_empty_is_long_lived_and_its_store_grows_per_key():
    containers = _containers(
        """
        class Memo:
            def __init__(self):
                self.cache = {}

            def get(self, key, x):
                self.cache[key] = x.detach()
                return self.cache[key]
        """
    )
    [store] = containers.stores
    assert store.container.display() == "Memo.cache" and store.op == "setitem"
    assert containers.long_lived_kinds(store) == {"dict"}
    assert containers.grows(store, "dict")
    uses = containers.uses([store.container])[store.container]
    assert [use.kind for use in uses] == ["empty", "store", "read"]
    assert not containers.is_cleared(store.container, uses)


def test_a_container_popped_somewhere_is_cleared():
    containers = _containers(
        """
        pending = {}

        def put(key, x):
            pending[key] = x.detach()

        def take(key):
            return pending.pop(key)
        """
    )
    [store] = containers.stores
    uses = containers.uses([store.container])[store.container]
    assert containers.is_cleared(store.container, uses)


def test_a_local_shadowing_a_module_container_fills_its_own():
    containers = _containers(
        """
        bank = []

        def collect(x):
            bank = []
            bank.append(x.detach())
            return bank
        """
    )
    [store] = containers.stores
    assert containers.long_lived_kinds(store) == set()


def test_a_constant_key_does_not_grow():
    containers = _containers(
        """
        class Swa:
            def __init__(self):
                self.state = {}

            def update(self, x):
                self.state["last"] = x.detach()
        """
    )
    [store] = containers.stores
    assert not containers.grows(store, "dict")


def test_a_module_result_saved_whole_is_built_once():
    containers = _containers(
        """
        import torch

        converted = {}
        for name, tensor in torch.load("in.pt").items():
            converted[name] = tensor.clone()
        torch.save(converted, "out.pt")
        """
    )
    [store] = containers.stores
    uses = containers.uses([store.container])[store.container]
    assert containers.built_once([store], uses)


def test_a_script_collection_consumed_after_its_for_loop_is_built_once_but_not_under_while_or_in_a_function():
    script = """
        import torch

        samples = []
        with torch.no_grad():
            {loop}:
                samples.append(decoder(torch.randn(4, 8, device="cuda")).detach())
        grid = torch.stack(samples)
        """
    for loop, once in (("for _ in range(3)", True), ("while more()", False)):
        containers = _containers(script.format(loop=loop))
        [store] = containers.stores
        uses = containers.uses([store.container])[store.container]
        assert containers.built_once([store], uses) is once, loop
    in_a_function = """
        import torch

        samples = []

        @torch.no_grad()
        def draw():
            samples.append(decoder(torch.randn(4, 8, device="cuda")).detach())

        for _ in range(3):
            draw()
        grid = torch.stack(samples)
        """
    containers = _containers(in_a_function)
    [store] = containers.stores
    assert not containers.built_once([store], containers.uses([store.container])[store.container])


def test_a_key_bound_to_a_tuple_of_arguments_grows_and_a_constant_tuple_does_not():
    containers = _containers(
        """
        class Crops:
            def __init__(self):
                self.feats = dict()

            def add(self, image_id, scale, x):
                key = (image_id, scale)
                self.feats[key] = x.detach()
                slot = ("last", 1)
                self.feats[slot] = x.detach()
        """
    )
    per_key, constant = containers.stores
    assert containers.long_lived_kinds(per_key) == {"dict"}
    assert containers.grows(per_key, "dict")
    assert not containers.grows(constant, "dict")


def test_a_class_attribute_written_through_the_class_name_is_the_class_container():
    containers = _containers(
        """
        class Conditioner:
            _embs = {}

            def forward(self, spk, wav):
                if spk not in Conditioner._embs:
                    Conditioner._embs[spk] = wav.detach()
                return Conditioner._embs[spk]
        """
    )
    [store] = containers.stores
    assert store.container.display() == "Conditioner._embs"
    assert containers.long_lived_kinds(store) == {"dict"}
    uses = containers.uses([store.container])[store.container]
    assert [use.kind for use in uses] == ["empty", "lookup", "store", "read"]


def test_a_function_the_instance_is_handed_to_uses_the_containers_at_the_call():
    """`helper(self)`: what the function does to `<param>.<attr>` is a use of the class's container at the
    call, whatever the parameter is called (an eviction, a clear, an in-place update)."""
    containers = _containers(
        """
        def evict_oldest(table, limit):
            if len(table.entries) > limit:
                table.entries.popitem(last=False)


        def log_only(table):
            print(len(table.entries))


        class Cache:
            def __init__(self):
                self.entries = {}

            def put(self, key, x):
                self.entries[key] = x.detach()
                log_only(self)
                evict_oldest(self, 16)
        """
    )
    [store] = containers.stores
    uses = containers.uses([store.container])[store.container]
    assert [use.kind for use in uses] == ["empty", "store", "safe", "safe", "evict"]
    assert containers.is_cleared(store.container, uses)
    only_logged = _containers(
        """
        def log_only(table):
            print(len(table.entries))


        class Cache:
            def __init__(self):
                self.entries = {}

            def put(self, key, x):
                self.entries[key] = x.detach()
                log_only(self)
        """
    )
    [store] = only_logged.stores
    assert not only_logged.is_cleared(store.container, only_logged.uses([store.container])[store.container])


def test_a_key_returned_as_a_literal_by_a_function_of_the_file_does_not_grow():
    """`key = slot()` with `def slot(): return ("last", 224)` (or a method of an instance of the file's
    class): one slot, overwritten; a function that returns its argument still grows."""
    source = """
        def slot():
            return ("last", 224)


        def same(value):
            return value


        class Feats:
            def __init__(self):
                self._feats = {{}}

            def __call__(self, crop, size):
                key = {key}
                self._feats[key] = crop.detach()
                return self._feats[key]
        """
    for key, grows in (("slot()", False), ("same(size)", True), ("size", True)):
        containers = _containers(source.format(key=key))
        [store] = containers.stores
        assert containers.grows(store, "dict") is grows, key
