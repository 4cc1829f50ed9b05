"""The model's value facts: what rules rely on to tell a device tensor from host data or metadata."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.flow.values import Value, Values
from stabfix.model.source.names import build_names
from stabfix.model.source.traversal import MergedVisitor


def _value_of_returned(source: str) -> Value:
    """The value of the expression the last `return` of the source returns."""
    module = cst.parse_module(textwrap.dedent(source))
    names = build_names(module)
    returns: list[cst.Return] = []

    class Collect(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            returns.append(node)

    module.visit(Collect())
    return Values(names).value_of(returns[-1].value)


def test_a_detached_model_output_is_a_snapshot_tensor():
    value = _value_of_returned(
        """
        def embed(encoder, x):
            out = encoder(x)
            return out.detach()
        """
    )
    assert value.tensor and value.snapshot and value.detached and not value.host


def test_moving_to_a_cpu_device_bound_elsewhere_is_host_memory():
    value = _value_of_returned(
        """
        import torch
        def keep(t):
            store = torch.device("cpu")
            return t.detach().to(store)
        """
    )
    assert value.host and not value.placed


def test_to_device_is_placed_on_the_accelerator():
    value = _value_of_returned(
        """
        def keep(t, device):
            return t.detach().to(device, non_blocking=True)
        """
    )
    assert value.placed and not value.host


def test_tensor_metadata_and_python_numbers_are_not_tensors():
    assert _value_of_returned("def f(x):\n    return x.shape[1:]\n").metadata
    item = _value_of_returned("def f(loss):\n    return loss.detach().item()\n")
    assert item.not_tensor and item.host and not item.tensor


def test_values_under_no_grad_are_snapshots_through_aliases():
    value = _value_of_returned(
        """
        import torch as th
        def teacher_logits(teacher, x):
            with th.no_grad():
                logits = teacher(x)
            result = logits
            return result
        """
    )
    assert value.snapshot and value.detached


def test_a_batch_from_a_dataloader_is_host_memory_until_moved():
    source = """
        from torch.utils.data import DataLoader as DL
        def run(ds, device):
            loader = DL(ds, batch_size=4)
            for i, batch in enumerate(loader):
                x = batch[0]
                y = x.to(device)
            return {ret}
        """
    assert _value_of_returned(source.format(ret="x")).host
    moved = _value_of_returned(source.format(ret="y"))
    assert moved.placed and not moved.host


def test_a_name_bound_on_two_branches_joins_both():
    value = _value_of_returned(
        """
        def f(t, flag):
            if flag:
                v = t.cpu()
            else:
                v = t.detach()
            return v
        """
    )
    assert value.host and value.snapshot  # one branch is host memory: the finding would be unsure


def test_factory_tables_and_parameters_are_told_apart_from_data():
    assert _value_of_returned("import torch\ndef f(n):\n    return torch.arange(n)\n").constant
    grads = _value_of_returned("def f(model):\n    for p in model.parameters():\n        g = p.grad\n    return g\n")
    assert grads.parameter


def test_arithmetic_of_a_tensor_and_a_number_is_a_tensor():
    value = _value_of_returned("import torch\ndef f(x):\n    y = torch.tanh(x.detach())\n    return y * 2.0\n")
    assert value.tensor and value.snapshot


def test_values_are_followed_through_a_same_file_helper_and_its_tuple():
    value = _value_of_returned(
        """
        class Trainer:
            def _prepare(self, batch):
                x = batch["x"].to(self.device)
                return x, x.detach().cpu()

            def step(self, batch):
                on_device, on_host = self._prepare(batch)
                return on_host
        """
    )
    assert value.host and value.snapshot


def test_a_helper_returning_a_detached_encoding_is_a_snapshot_tensor():
    value = _value_of_returned(
        """
        import torch
        @torch.no_grad()
        def encode(encoder, ids):
            return encoder(ids)

        def step(encoder, ids):
            feats = encode(encoder, ids)
            return feats
        """
    )
    assert value.call and value.snapshot and value.detached and not value.host


def test_a_tuple_display_of_snapshots_is_grouped():
    value = _value_of_returned(
        """
        def embed(encoder, x):
            out = encoder(x)
            return (out.detach(), out.detach().mean())
        """
    )
    assert value.grouped and value.tensor and value.snapshot


def test_an_element_unpacked_from_a_call_under_no_grad_is_a_forward_snapshot():
    value = _value_of_returned(
        """
        import torch

        def embed(text_encoder, ids, device):
            with torch.no_grad():
                emb, mask = text_encoder(ids.to(device))
            return emb
        """
    )
    assert value.call and value.model_output and value.snapshot and not value.grouped


def test_rows_of_a_cpu_tensor_drawn_through_enumerate_of_zip_are_host_memory():
    value = _value_of_returned(
        """
        def rows(ids, feats):
            for i, (sample_id, feat) in enumerate(zip(ids.tolist(), feats.cpu())):
                return feat.clone()
        """
    )
    assert value.host


def test_moving_to_a_self_attribute_bound_only_to_the_cpu_is_host_memory():
    value = _value_of_returned(
        """
        import torch

        class Store:
            def __init__(self):
                self.store_device = torch.device("cpu")

            def put(self, emb):
                return emb.detach().to(self.store_device)
        """
    )
    assert value.host and not value.placed


def test_a_record_of_nested_displays_is_not_a_group_of_tensors():
    flat = _value_of_returned("def f(h, c):\n    return (h.detach(), c.detach())\n")
    assert flat.grouped and flat.tensor
    record = _value_of_returned(
        """
        def f(site, fn):
            params = [("probs", fn.probs.detach().clone(), None)]
            return (site, type(fn), params)
        """
    )
    assert not record.grouped and not record.tensor


def test_rows_of_a_detached_device_tensor_drawn_through_zip_are_device_snapshots():
    # `.tolist()` on the ids beside it moves the ids, not the rows
    row = _value_of_returned(
        """
        def rows(model, ids, x):
            feats = model(x.cuda())
            for sid, row in zip(ids.tolist(), feats.detach()):
                return row
        """
    )
    assert row.tensor and row.snapshot and not row.host
    sid = _value_of_returned(
        """
        def rows(model, ids, x):
            feats = model(x.cuda())
            for sid, row in zip(ids.tolist(), feats.detach()):
                return sid
        """
    )
    assert sid.host and not sid.tensor


def test_elements_of_an_unknown_iterable_are_unknown():
    value = _value_of_returned(
        """
        def items(batch):
            for key, item in batch.items():
                return item
        """
    )
    assert not value.tensor and not value.snapshot


def _values_of_file(source: str):
    from libcst.metadata import MetadataWrapper

    from stabfix.model import FileModel
    from stabfix.model.source.traversal import MergedVisitor

    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(("values",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    stored = [node for node in module.body[-1].body.body[-1].body.body if isinstance(node, cst.SimpleStatementLine)]
    return model.values, stored


def test_a_call_reshaped_under_no_grad_is_a_forward_pass_and_its_result_one_tensor():
    values, statements = _values_of_file(
        """
        import torch

        class Store:
            @torch.no_grad()
            def get(self, key, tokens):
                a = self.encoder(tokens).squeeze(0)
                b = self.encoder(tokens)
        """
    )
    squeezed, whole = (values.value_of(line.body[0].value) for line in statements)
    assert squeezed.tensor and squeezed.model_output
    assert whole.model_output and not whole.tensor  # a forward output: may still be a structure


def test_a_call_reshaped_with_autograd_on_is_not_taken_for_a_forward_pass():
    values, statements = _values_of_file(
        """
        class Store:
            def get(self, key, tokens):
                a = self.featurizer(tokens).squeeze(0)
        """
    )
    value = values.value_of(statements[0].body[0].value)
    assert not value.model_output and not value.tensor


def test_a_loop_over_a_display_of_constants_draws_constants():
    value = _value_of_returned(
        """
        import torch
        def rows():
            a = torch.tensor([1.0, 2.0])
            b = torch.zeros(2)
            for t in (a, b):
                pass
            return t
        """
    )
    assert value.tensor and value.constant


def test_a_factory_asked_for_grad_is_not_a_constant():
    for made in ("torch.zeros(3, requires_grad=True)", "torch.tensor([1.0]).requires_grad_()"):
        value = _value_of_returned(
            f"""
            import torch
            def leaf():
                w = {made}
                return w
            """
        )
        assert value.tensor and not value.constant, made
    still = _value_of_returned(
        """
        import torch
        def table():
            return torch.zeros(3, requires_grad=False)
        """
    )
    assert still.constant


def test_a_tensor_handed_to_an_optimizer_is_a_parameter_whatever_made_it():
    source = textwrap.dedent(
        """
        import torch
        from torch import optim

        with torch.no_grad():
            start = mapper(codes).mean(0)
        latent = start.detach().clone()
        latent.requires_grad = True
        offsets = torch.zeros(4, requires_grad=True)
        trained = [latent] + [offsets]
        opt = optim.Adam([{"params": trained, "lr": 0.1}])
        other = start.detach().clone()
        probe(latent.detach().clone(), offsets.detach(), other)
        """
    )
    module = cst.parse_module(source)
    model = FileModel(needs=("values",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    probe = module.body[-1].body[0].value  # type: ignore[attr-defined]
    latent, offsets, other = (model.values.value_of(arg.value) for arg in probe.args)  # type: ignore[union-attr]
    assert latent.parameter and offsets.parameter and not other.parameter
    assert latent.host_or_bookkeeping and not other.host_or_bookkeeping


def test_a_class_wrapping_a_placed_model_is_no_forward_pass():
    wrapped = _value_of_returned(
        """
        def wrap(model, device):
            model = model.to(device)
            ema = ModelEMA(model)
            return ema
        """
    )
    assert not wrapped.model_output
    forward = _value_of_returned(
        """
        def encode(text_encoder, ids, device):
            return text_encoder(ids.to(device))
        """
    )
    assert forward.model_output


def test_what_a_helper_returns_of_its_parameter_is_what_the_call_passes():
    """`inputs, ids = split(batch)` with `split` returning `batch[0], batch[1]`: host memory when the call
    hands it a batch of a DataLoader, placed when the call hands it a moved tensor; the same through a
    method of an instance of the file's class."""
    source = """
        import torch
        from torch.utils.data import DataLoader

        def split(batch):
            return batch[0], batch[1]

        class Steps:
            def run(self, batch):
                return batch[0].detach(), batch[1]

        def go(ds, device):
            for batch in DataLoader(ds):
                inputs, ids = {call}
            return inputs
        """
    assert _value_of_returned(source.format(call="split(batch)")).host
    assert _value_of_returned(source.format(call="Steps().run(batch)")).host
    moved = _value_of_returned(source.format(call="split(batch.to(device))"))
    assert moved.placed and not moved.host


def test_a_tensor_handed_to_a_helper_that_builds_the_optimizer_is_trained():
    """`opt = make_opt(w, noise)` with `make_opt` building `Adam([w] + noise)`: `w` is a tensor the
    optimizer trains (a parameter), as when the file builds the optimizer itself."""
    source = """
        import torch

        def make_opt(latent, extra):
            return torch.optim.Adam([latent] + extra, lr=0.05)

        def invert(w0, noise):
            w = w0.detach().clone()
            opt = make_opt(w, noise)
            other = w0.detach().clone()
            return {ret}
        """
    module = cst.parse_module(textwrap.dedent(source.format(ret="w")))
    model = FileModel(("values",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    returned = module.body[-1].body.body[-1].body[0].value  # `return w`
    assert model.values.value_of(returned).parameter
    assert not _value_of_returned(source.format(ret="other")).parameter, "a copy no optimizer is handed"
