"""Another scanned file's model, built lazily with the parts asked for, and the `foreign` hook that hands
back only node-free answers; what each answer consulted is recorded."""

from __future__ import annotations

import libcst as cst
import pytest

from stabfix.project import Project, ProjectIndex

ROOT = "/stabfix-sources"
SOURCES = {
    "app/__init__.py": "from .models import Net\n",
    "app/models.py": (
        "import torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
        "    def forward(self, x):\n        return F.softmax(self.fc(x), dim=1)\n\n\n"
        "def build():\n    return Net()\n"
    ),
    "app/broken.py": "def f(:\n",
    "app/train.py": "from .models import Net, build\nfrom . import broken\n",
    "app/unrelated.py": "x = 1\n",
}


def _view(path: str = "app/train.py"):
    return Project(ProjectIndex.from_sources(SOURCES, ROOT)).view(f"{ROOT}/{path}")


def test_definition_gives_the_other_files_model_and_node():
    view = _view()
    found = view.definition(".models.Net", needs=("activations",))
    assert isinstance(found.node, cst.ClassDef) and found.node.name.value == "Net"
    assert found.model.activations is not None and found.model.losses is None  # only the parts asked for
    assert found.symbol.qualified == "app.models.Net"
    method = view.definition("app.Net.forward")
    assert isinstance(method.node, cst.FunctionDef) and method.node.name.value == "forward"


def test_foreign_runs_the_question_on_the_other_files_model():
    view = _view()
    kind = view.foreign(".models.Net", lambda d: d.model.activations.forward_of(d.node).kind, needs=("activations",))
    assert kind == "softmax"
    hook = view.foreign_hook(lambda d: d.node.name.value)
    assert hook("app.models.build") == "build"
    assert hook("torch.nn.Linear") is None  # outside the tree
    assert hook(".broken.f") is None  # does not parse
    assert view.foreign(".models.Net", lambda d: 1 / 0) is None  # a question that fails is unknown


def test_the_files_own_definitions_are_not_foreign():
    view = _view("app/models.py")
    assert view.definition("app.models.Net") is None
    assert view.resolve("app.models.Net").qualified == "app.models.Net"


def test_the_view_records_what_it_consulted_and_nothing_else():
    view = _view()
    view.definition(".models.Net", needs=("activations",))
    assert sorted(view.consulted.files) == [f"{ROOT}/app/models.py"]
    assert view.consulted.modules[f"{ROOT}:app.models"] == f"{ROOT}/app/models.py"  # as imported from its search root
    # a second view of the same project is served from the model cache and still records the file
    other = view.project.view(f"{ROOT}/app/__init__.py")
    other.definition("app.Net", needs=("activations",))
    assert f"{ROOT}/app/models.py" in other.consulted.files


def test_a_model_with_more_parts_is_built_when_asked():
    view = _view()
    first = view.definition(".models.Net", needs=("activations",))
    second = view.definition(".models.Net", needs=("activations",))
    assert second.model is first.model  # built once
    wider = view.definition(".models.Net", needs=("losses",))
    assert wider.model.losses is not None


def test_a_question_about_functions_builds_no_model_for_a_class():
    view = _view()
    functions_only = view.foreign_hook(lambda d: d.node.name.value, kinds=("def", "method"))
    assert functions_only("app.models.build") == "build"
    built = list(view.project._models)
    assert functions_only(".models.Net") is None  # a class: unknown to this question
    assert functions_only("app.Net.forward") == "forward"  # its method still answers
    other = _view()
    assert other.foreign(".models.Net", lambda d: d.node.name.value, kinds=("def",)) is None
    assert not other.project._models  # the class's file was never parsed
    assert f"{ROOT}/app/models.py" in other.consulted.files  # its outline was read: a cached result depends on it
    assert built


HELPERS = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": (
        "import torch.nn as nn\n\n\n"
        "def compare(pred, ref, measure):\n    return measure(pred, ref)\n\n\n"
        "def fit(pred, ref):\n    return compare(pred, ref, nn.L1Loss())\n"
    ),
    "pkg/train.py": "from .helpers import compare\n",
}


def _target_parameters(definition):
    losses = definition.model.losses
    return sorted(p.name.value for p in definition.node.params.params if losses.parameter_role(definition.node, p.name.value) == "target")


def test_an_answer_does_not_hang_on_which_question_about_the_file_came_first():
    # `summaries` tells `losses` what every call passes for a parameter (`measure` is always an L1 loss);
    # a question asked for `losses` alone must get the same answer whether or not another question
    # already had the file built with `summaries`
    def view():
        return Project(ProjectIndex.from_sources(HELPERS, ROOT)).view(f"{ROOT}/pkg/train.py")

    alone = view().foreign(".helpers.compare", _target_parameters, needs=("losses",))
    after = view()
    assert after.foreign(".helpers.compare", _target_parameters, needs=("summaries",)) == ["ref"]
    assert after.foreign(".helpers.compare", _target_parameters, needs=("losses",)) == alone == []


def _many_helpers(count: int) -> dict[str, str]:
    sources = {"many/__init__.py": ""}
    for number in range(count):
        sources[f"many/helper_{number:02d}.py"] = f"def run_{number}(model):\n    model.eval()\n    return model\n"
    sources["many/train.py"] = "".join(f"from .helper_{n:02d} import run_{n}\n" for n in range(count))
    return sources


def _counting_builds(project: Project, monkeypatch) -> list:
    built: list = []
    original = project._build

    def counted(path, text, parts, **options):  # the models riding in its traversal are built there too
        model, riders = original(path, text, parts, **options)
        built.extend((path, kept) for kept in (parts, *riders))
        return model, riders

    monkeypatch.setattr(project, "_build", counted)
    return built


def test_the_models_a_scan_asks_for_again_are_not_rebuilt(monkeypatch):
    # a training script that calls 60 helpers of its package asks about each under two part sets, once per
    # call; each model is built once (a process that kept 32 rebuilt the oldest ones at every round)
    count = 60
    project = Project(ProjectIndex.from_sources(_many_helpers(count), ROOT))
    built = _counting_builds(project, monkeypatch)
    view = project.view(f"{ROOT}/many/train.py")
    for _ in range(2):
        for number in range(count):
            assert view.foreign(f".helper_{number:02d}.run_{number}", lambda d: d.node.name.value,
                                needs=("summaries",)) == f"run_{number}"
            assert view.foreign(f".helper_{number:02d}.run_{number}", lambda d: d.model.losses is not None,
                                needs=("losses",)) is True
    assert len(built) == len(set(built)) == 2 * count


def test_kept_models_and_trees_are_bounded_by_the_source_they_hold(monkeypatch):
    from stabfix.project import definitions

    monkeypatch.setattr(definitions, "_CHARACTERS_KEPT", 200)  # about four helpers' source
    project = Project(ProjectIndex.from_sources(_many_helpers(12), ROOT))
    view = project.view(f"{ROOT}/many/train.py")
    for number in range(12):
        assert view.foreign(f".helper_{number:02d}.run_{number}", lambda d: d.node.name.value) == f"run_{number}"
    assert 1 <= len(project._models) <= 4 and 1 <= len(project._modules) <= 4
    assert f"{ROOT}/many/helper_11.py" in project._modules  # the newest is kept


def _returned_kinds(definition):
    from stabfix.model.flow.returned_values import returned_values

    return repr(returned_values(definition.model.values, definition.node))


def test_a_question_is_answered_by_a_kept_model_whose_other_parts_change_nothing(monkeypatch):
    # a file asked about for `summaries` (which reads `values`) answers a later `values` question from the
    # same traversal, with the answer a model built for `values` alone gives; `losses` is built anew:
    # `summaries` hands it what the callers pass
    def project():
        return Project(ProjectIndex.from_sources(HELPERS, ROOT))

    alone = project().view(f"{ROOT}/pkg/train.py").foreign(".helpers.fit", _returned_kinds, needs=("values",))
    shared = project()
    built = _counting_builds(shared, monkeypatch)
    view = shared.view(f"{ROOT}/pkg/train.py")
    assert view.foreign(".helpers.fit", lambda d: d.model.summaries is not None, needs=("summaries",)) is True
    assert view.foreign(".helpers.fit", _returned_kinds, needs=("values",)) == alone
    assert len(built) == 1
    assert view.foreign(".helpers.compare", _target_parameters, needs=("losses",)) == []
    assert len(built) == 2


def test_which_kept_models_answer_alike():
    from stabfix.model import answers_alike, required_parts

    for_summaries = required_parts(["summaries"])
    assert answers_alike(for_summaries, ["values"]) and answers_alike(for_summaries, [])
    assert answers_alike(for_summaries, ["summaries"]) and answers_alike(required_parts(["values"]), ["values"])
    assert not answers_alike(for_summaries, ["losses"])  # rewired by `summaries`
    assert not answers_alike(for_summaries, ["activations"])
    assert not answers_alike(required_parts(["values"]), ["summaries"])  # parts it lacks
    assert not answers_alike(for_summaries, ["randomness"])


def test_a_name_asked_about_again_is_resolved_once_and_its_files_stay_recorded(monkeypatch):
    view = _view()
    looked_up = []
    original = view.index.resolve
    monkeypatch.setattr(view.index, "resolve", lambda *args: looked_up.append(args) or original(*args))
    assert view.resolve(".models.Net").kind == "class"
    assert view.foreign(".models.Net", lambda d: d.node.name.value) == "Net"
    assert view.lineage(".models.Net")[0][0] == "app.models.Net"
    assert len(looked_up) == 1
    assert f"{ROOT}/app/models.py" in view.consulted.files


def test_a_model_asked_for_elsewhere_rides_in_the_traversal_and_answers_as_if_built_alone(monkeypatch):
    # `losses` was asked of one file; another file built for `summaries` builds its `losses` model in the
    # same traversal, with its own `losses` part: the one of the `summaries` model is told what callers
    # pass (`ref` a target), the one asked for alone is not, and neither is the rider
    sources = {**HELPERS, "pkg/other.py": HELPERS["pkg/helpers.py"], "pkg/train.py": "from .helpers import compare\n"}
    project = Project(ProjectIndex.from_sources(sources, ROOT))
    built = _counting_builds(project, monkeypatch)
    view = project.view(f"{ROOT}/pkg/train.py")
    assert view.foreign("pkg.other.compare", _target_parameters, needs=("losses",)) == []
    assert view.foreign(".helpers.compare", _target_parameters, needs=("summaries",)) == ["ref"]
    assert len(built) == 3  # the rider came with the `summaries` model
    assert view.foreign(".helpers.compare", _target_parameters, needs=("losses",)) == []
    assert len(built) == 3
    rider = view.definition(".helpers.compare", needs=("losses",)).model
    beside = view.definition(".helpers.compare", needs=("summaries",)).model
    assert rider.names is beside.names and rider.losses is not beside.losses


def test_which_models_can_ride_in_another_traversal():
    from stabfix.model import FileModel, built_riding, required_parts

    for_summaries = required_parts(["summaries"])
    assert built_riding(for_summaries, ["losses"]) == {"losses"}  # rewired there: its own
    assert built_riding(for_summaries, ["values"]) == frozenset()
    assert built_riding(required_parts(["losses"]), ["summaries"]) >= {"summaries", "values"}
    with pytest.raises(ValueError):  # a model with a project answers otherwise: it takes nothing
        FileModel(["losses"], beside=FileModel(["summaries"]), project=object())  # type: ignore[arg-type]
