"""The model's loss index: which calls compute a loss, with which prediction and target, shared by rules."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> FileModel:
    model = FileModel(("losses",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def _code(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module(body=[]).code_for_node(node)


def _targets(model: FileModel) -> dict[str, str | None]:
    assert model.losses is not None
    return {_code(site.call.func): _code(found.target) for site, found in model.losses.loss_sites()}  # type: ignore[misc]


def test_a_loss_module_on_self_is_found_from_a_method_written_before_init():
    model = _model(
        """
        import torch.nn as nn

        class Trainer:
            def step(self, x, y):
                return self.crit(self.net(x), y)

            def __init__(self, net):
                self.net = net
                self.crit = nn.SmoothL1Loss()
        """
    )
    assert _targets(model) == {"self.crit": "y"}


def test_a_shadowed_import_is_not_a_torch_loss():
    model = _model(
        """
        import torch.nn.functional as F

        def step(F, pred, y):
            return F.mse_loss(pred, y)

        def other(pred, y):
            return F.mse_loss(pred, y)
        """
    )
    assert model.losses is not None
    kinds = [model.losses.resolve(site.call) for site in model.losses.sites]
    library = [loss.library for loss in kinds if loss is not None]
    assert library == [False, True]  # the parameter `F` is some object with a loss-named method


def test_the_reference_of_a_cosine_embedding_loss_is_its_second_embedding():
    model = _model(
        """
        import torch.nn as nn

        crit = nn.CosineEmbeddingLoss()

        def step(student, teacher, x, ones):
            return crit(student(x), teacher(x), ones)
        """
    )
    assert _targets(model) == {"crit": "teacher(x)"}


def test_a_same_file_helper_is_a_loss_of_the_argument_it_uses_as_target():
    model = _model(
        """
        import torch.nn.functional as F

        def fit_term(pred, ref):
            return F.l1_loss(pred, ref)

        def step(model, x, y):
            return fit_term(model(x), y)
        """
    )
    targets = _targets(model)
    assert targets["fit_term"] == "y"
    assert targets["F.l1_loss"] == "ref"


def test_both_rules_share_one_loss_index():
    model = FileModel(("names", "losses", "gradients", "tensors"))
    assert model.gradients is not None and model.tensors is not None
    assert model.gradients.loss_index is model.losses and model.tensors.losses is model.losses


def test_peeling_strips_what_both_operands_apply_alike_and_stops_at_random_callees():
    from stabfix.model.calls.loss_operands import peel_common

    def peeled(a: str, b: str) -> tuple[str | None, str | None]:
        x, y = peel_common(cst.parse_expression(a), cst.parse_expression(b))
        return _code(x), _code(y)

    assert peeled("gram(vgg(out))", "gram(vgg(ref))") == ("out", "ref")
    assert peeled("F.log_softmax(s / T, -1)", "F.softmax(t / T, -1)") == ("s", "t")
    assert peeled("F.dropout(h)", "F.dropout(g)") == ("F.dropout(h)", "F.dropout(g)")
    assert peeled("self.vgg(a)", "self.enc(b)") == ("self.vgg(a)", "self.enc(b)")
    assert peeled("f(a, b)", "f(c, d)") == ("f(a, b)", "f(c, d)")


def test_value_keys_follow_a_self_attribute_and_a_dict_entry_only_where_they_provably_hold():
    model = FileModel(("tensors",))
    module = cst.parse_module(textwrap.dedent(
        """
        class T:
            def step(self, x_src, batch):
                self.ref = x_src
                batch["style"] = batch["src"]
                a = f(self.ref, batch["style"])

            def other(self, batch):
                if cond:
                    batch["other"] = batch["src"]
                self.ref2 = batch["src"]
                b = f(batch["other"])

            def reset(self, y):
                self.ref2 = y
                c = f(self.ref2)
        """
    ))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    assert model.tensors is not None
    calls = [node for node in _walk(module) if isinstance(node, cst.Call) and _code(node.func) == "f"]
    keys = [model.tensors.value_key(arg.value).key for call in calls for arg in call.args]  # type: ignore[union-attr]
    # the branched store and the attribute bound in two methods are not followed
    assert keys == ["x_src", 'batch["src"]', 'batch["other"]', "self.ref2"]


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_a_function_of_another_scanned_file_that_uses_an_argument_as_its_target_is_a_loss_of_it():
    from stabfix.project import Project, ProjectIndex

    root = "/stabfix-sources"
    sources = {
        "app/__init__.py": "",
        "app/terms.py": textwrap.dedent(
            """
            import torch.nn.functional as F


            def fit_term(criterion, pred, ref):
                return criterion(pred, ref) + F.l1_loss(pred, ref)


            def penalty(model, x):
                return model(x).pow(2).mean()
            """
        ),
        "app/train.py": textwrap.dedent(
            """
            from .terms import fit_term, penalty


            def step(net, crit, x, y):
                return fit_term(crit, net(x), y) + penalty(net, x)
            """
        ),
    }
    view = Project(ProjectIndex.from_sources(sources, root)).view(f"{root}/app/train.py")
    model = FileModel(("losses",), project=view)
    module = cst.parse_module(sources["app/train.py"])
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    found = {_code(site.call.func): found for site, found in model.losses.loss_sites()}  # type: ignore[union-attr]
    assert set(found) == {"fit_term"}  # `penalty` uses no argument as a target
    assert _code(found["fit_term"].target) == "y" and not found["fit_term"].checked  # another file holds the loss


def test_a_method_of_an_instance_the_file_builds_is_a_loss_of_the_argument_it_uses_as_target():
    model = _model(
        """
        import torch
        import torch.nn.functional as F

        class Terms:
            def fit(self, pred, ref):
                return F.mse_loss(pred, ref)

        def step(net, x, y):
            terms = Terms()
            return Terms().fit(net(x), y) + terms.fit(net(x), y * 2)
        """
    )
    assert _targets(model) == {"Terms().fit": "y", "terms.fit": "y * 2", "F.mse_loss": "ref"}


def test_a_function_of_another_file_that_takes_the_argmax_of_an_argument_does_not_make_it_the_target():
    from stabfix.project import Project, ProjectIndex

    root = "/stabfix-sources"
    sources = {
        "app/__init__.py": "",
        "app/terms.py": "import torch\nimport torch.nn.functional as F\n\n\ndef nll(logp, soft):\n    return F.nll_loss(logp, torch.argmax(soft, dim=1))\n",
        "app/train.py": "from .terms import nll\n\n\ndef step(net, x, y):\n    return nll(net(x), y)\n",
    }
    view = Project(ProjectIndex.from_sources(sources, root)).view(f"{root}/app/train.py")
    model = FileModel(("losses",), project=view)
    module = cst.parse_module(sources["app/train.py"])
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    assert list(model.losses.loss_sites()) == []  # type: ignore[union-attr]


def test_a_helper_that_takes_the_argmax_of_its_target_argument_does_not_keep_its_grad():
    model = _model(
        """
        import torch
        import torch.nn.functional as F

        def hard(logp, soft):
            return F.nll_loss(logp, torch.argmax(soft, dim=1))

        def fit(pred, ref):
            return F.mse_loss(pred, ref.float())

        def step(net, x, y):
            return hard(net(x), y) + fit(net(x), y)
        """
    )
    kept = {_code(site.call.func): model.losses.target_keeps_grad(found) for site, found in model.losses.loss_sites()}  # type: ignore[union-attr]
    assert kept["hard"] is False and kept["fit"] is True and kept["F.mse_loss"] is True


def _model_with_summaries(source: str) -> FileModel:
    model = FileModel(("losses", "summaries"))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def test_a_parameter_every_caller_hands_a_torch_loss_is_that_loss():
    model = _model_with_summaries(
        """
        import torch

        def fit(net, x, y, l1):
            return l1(net(x), y.unsqueeze(1))

        def fit_other(net, x, y, dist):
            return dist(net(x), y)

        def main(net, x, y, penalty):
            criterion = torch.nn.L1Loss()
            fit(net, x, y, criterion)
            fit(net, x, y, torch.nn.L1Loss())
            fit_other(net, x, y, criterion)
            fit_other(net, x, y, penalty)
        """
    )
    targets = _targets(model)
    assert targets["l1"] == "y.unsqueeze(1)"
    # one caller hands something else: not shown to be a loss
    assert "dist" not in targets


def test_a_class_whose_methods_compute_a_loss():
    model = _model(
        """
        import torch.nn as nn

        class Classifier(nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net
                self.criterion = nn.CrossEntropyLoss()

            def loss_fn(self, logits, labels):
                return self.criterion(logits, labels)

        class Predictor(nn.Module):
            def forward(self, x):
                return self.net(x).softmax(-1)
        """
    )
    classes = {node.name.value: node for node in model.losses.module.body if isinstance(node, cst.ClassDef)}
    assert model.losses.computed_in_class(classes["Classifier"])
    assert not model.losses.computed_in_class(classes["Predictor"])


# -- a loss by its use, whatever its class is called (issue 19 item 4) -------------------------------------

_OVERLAP_CLASS = """
    import torch
    from torch import nn

    class SoftJaccard(nn.Module):
        def forward(self, logits, mask):
            probs = torch.sigmoid(logits)
            overlap = (probs * mask).sum()
            return 1 - overlap / (probs.sum() + mask.sum() - overlap)
    """


def test_an_instance_of_a_neutral_class_of_the_file_whose_result_is_backpropagated_is_a_loss():
    model = _model(_OVERLAP_CLASS + """
    def fit(net, batches, optimizer):
        jaccard = SoftJaccard()
        for images, mask in batches:
            value = 0.5 * jaccard(net(images), mask) + 0.1
            value.backward()
            optimizer.step()
    """)
    assert _targets(model) == {"jaccard": "mask"}


def test_the_same_instance_whose_result_is_only_logged_is_no_loss():
    model = _model(_OVERLAP_CLASS + """
    import torch.nn.functional as F

    def fit(net, batches, optimizer, log):
        jaccard = SoftJaccard()
        for images, labels, mask in batches:
            logits = net(images)
            F.binary_cross_entropy_with_logits(logits, labels).backward()
            optimizer.step()
            log(jaccard(logits, mask).item())
    """)
    assert _targets(model) == {"F.binary_cross_entropy_with_logits": "labels"}


def test_a_two_input_module_of_the_file_that_builds_layers_is_a_model_not_a_loss():
    model = _model("""
    import torch
    from torch import nn

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(8, 1)

        def forward(self, sample, condition):
            return self.body(torch.cat([sample, condition], 1))

    def step(generator, noise, condition, optimizer):
        critic = Critic()
        value = -critic(generator(noise), condition)
        value.backward()
        optimizer.step()
    """)
    assert _targets(model) == {}


def test_an_imported_module_is_a_loss_when_its_result_is_backpropagated_as_it_is():
    model = _model("""
    from pytorch_msssim import MS_SSIM
    from attention_blocks import CrossAttention

    similarity = MS_SSIM(data_range=1.0)
    mixer = CrossAttention(32)

    def fidelity(denoiser, noisy, clean):
        return 1 - similarity(denoiser(noisy), clean)

    def train(denoiser, encoder, loader, optimizer):
        for noisy, clean in loader:
            value = fidelity(denoiser, noisy, clean)
            hidden = encoder(noisy)
            penalty = mixer(hidden, clean).pow(2).mean()  # a layer's output needs a reduction
            (value + penalty).backward()
            optimizer.step()
    """)
    assert _targets(model) == {"similarity": "clean", "fidelity": "clean"}


def test_an_instance_whose_parameters_an_optimizer_takes_is_a_model():
    model = _model(_OVERLAP_CLASS + """
    import torch

    def fit(net, batches):
        jaccard = SoftJaccard()
        optimizer = torch.optim.Adam(jaccard.parameters())
        for images, mask in batches:
            jaccard(net(images), mask).backward()
            optimizer.step()
    """)
    assert _targets(model) == {}
