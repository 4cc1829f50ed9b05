"""The model of one file's training code that every rule queries.

Built from the engine's one libcst parse, in the same single traversal as the checkers, and only
the parts the selected rules declare in `needs` (a file no rule can fire on is never parsed):

- `imports`     what an imported name or attribute chain stands for (always built; it is cheap)
- `enclosing`   the classes and functions around the node being visited (always built; it is cheap)
- `tree`        each node's parent and every call in source order, recorded by the traversal (always built)
- `names`       every name use to its bindings, in Python's scopes; `self.<attr>` across methods
- `values`      what an expression is, where it lives and whether it is cut from autograd
                (queried after the traversal; built on `names`, `modules` and `optimizers`)
- `steps`       training structure: step loops and functions, and the gates that make code run
                on only some steps (built on `names` and `values`)
- `optimizers`  which expressions are optimizers, what they were built from, and the names of the
                tensors they are handed to train
- `modules`     which callables are torch modules (calling one is a forward pass)
- `classes`     which classes are `nn.Module` subclasses (through same-file bases and other files'
                classes), and whether an expression holds a module, an optimizer or another object
- `container_fills` what the code adds to a list or dict after building it (`.append`, `.extend`, `.insert`,
                `x[k] = v`), and the `self.<attr>` a method makes require grad in place (SF413)
- `containers`  long-lived dicts/lists (state carried across steps): their stores, reads,
                evictions, clears and hand-overs (built on `steps` and `names`)
- `memory`      what statements do to device memory: cache flushes (through aliases and the file's
                own wrappers), cleanup blocks in canonical form, phase boundaries (model swaps)
                (queried after the traversal; built on `names`)
- `events`      training events in source order (backward, optimizer steps, gradient clears and
                writes, clipping, unscaling, in-place parameter updates, optimizer constructions),
                each with its site: function, loops, branches, blocks; it builds `names` too
- `losses`      every call of the file, and which compute a loss with which prediction and target
                (built on `names`)
- `gradients`   per function: what is differentiated, returned or handed to unseen code (SF101)
- `tensors`     per scope: in-place changes, branch-bound names and loss sinks (SF401)
- `accumulation` gradient-accumulation loops (backward every iteration, optimizer step behind
                `% N`) and how the differentiated loss is scaled (built on `events`, `optimizers`, `losses`)
- `cuts`        values cut from the autograd graph and made to require grad again
                (`out.detach().requires_grad_()`, `Variable(out.data, requires_grad=True)`), with what
                they copy (built on `values`)
- `events_through_calls` the `events` queries with what each called function runs (its summary's
                backward, step, clear, unscale, clip, optimizer construction) spliced in at the call, in
                order (built on `events`, `summaries`; the event-order rules read it)
- `grad_clears` which events clear gradients, what a pass clears, which clears reach a stepped optimizer,
                clears run as hooks, a `zero_grad()` between two points (SF404, SF402) (built on `events`,
                `summaries`, `events_through_calls`)
- `optimizer_tensors` whether the tensors an in-place update changes are a stepped optimizer's
                parameters (SF402) (built on `names`, `events_through_calls`)
- `carried`     state a training loop or step method feeds back into its next iteration
                (`out, h = model(x, h)`) with a backward pass in between and no detach (built on
                `names`, `events`)
- `activations` which output activation an expression has had last (softmax, log_softmax, sigmoid,
                raw linear-layer logits), through names, held modules, `Sequential`s and same-file
                models' `forward` (queried after the traversal; built on `names`)
- `flows`       where a value goes: load_state_dict, a device move, a look, or elsewhere (SF107)
- `distributed` whether the file runs as one of several processes, which code only rank 0 runs (rank
                guards through helpers, decorators, early exits, callers), which loaders a framework
                shards (SF501-SF503) (queried after the traversal; built on `names`, `flows`, `events`)
- `recurrence`  whether a callable returns recurrent state or changes state outside the call (SF403)
                (queried after the traversal; built on `names`)
- `amp`         autocast regions and their dtype, loss scaling, anomaly-mode switches, legacy `torch.cuda.amp` uses
- `syncs`       which calls and truth tests make the host wait for the accelerator (barriers, memory
                reports, health checks, reads to the host) (queried after the traversal; built on `values`)
- `generation`  which calls and loops generate token by token, and whether what they make feeds the
                update (queried after the traversal; built on `names` and `modules`)
- `history`     which expressions still carry autograd history, and whether a backward pass or a
                return later uses what was accumulated from them (SF103)
- `uses`        what later code does with a held value (an accumulator): each read after a point and
                what it needs (a number, a tensor, unseen code, the graph), and whether a reset runs at
                every optimizer step (an accumulation window) (queried after the traversal)
- `modes`       train/eval mode switches (`X.eval()`, `X.train(...)`), the statements each eval switch
                governs, and what runs there: forwards with autograd on or off, backward passes (SF106, SF407)
- `randomness`  calls that draw random numbers (layer initialisation, dropout, shuffling, `torch.rand*`),
                calls that set a seed, calls of other modules, and the `__main__` guard (SF420)
- `summaries`   per function and method, node-free: what it returns element by element (requires grad,
                history, detached, device, activation, role) and what it does to `self` and its
                parameters (mode switches, zero_grad, step, backward, no_grad, stores), its callees'
                included; `foreign` hook for calls of other files (queried after the traversal)
- `loss_operand_values` the loss calls of each scope and their operands as tensor values (slot, spelling,
                alias steps), prediction slots and alias roles (SF401) (built on `tensors`)
- `log_prob_picks` gathers that pick one entry per row from a whole log_softmax over the same dim, whether
                its name is read by nothing else, and whether it is kept for its precision (SF104)
- `checkpoint_files` where the file saves and loads checkpoints, and which loads read back what it wrote
                (an in-process round trip, a file written from host memory, a located sibling load) (SF107)
- `device_caches` the long-lived containers that keep accelerator tensor snapshots, one per new key or call,
                and which of their entries are not certainly tensors (SF102) (built on `containers` and `values`)
- `running_totals` where the file sums or stores a value into a holder (`total += loss`, `losses.append(loss)`)
                and whether the holder keeps it from one iteration or step call to the next (SF103)
- `loss_targets` the places that make a tensor require grad, and whether such a tensor is the target of a
                loss whose gradient nothing reads (SF101) (built on `gradients` and `summaries`)

A checker reads the model; it never builds a part itself, so two rules that need the same fact
share one computation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

import libcst as cst

from stabfix.model.calls.activations import Activations
from stabfix.model.calls.events import Events
from stabfix.model.calls.losses import LossIndex
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.calls.modules import ModuleIndex
from stabfix.model.calls.optimizers import OptimizerTracker
from stabfix.model.domain.amp import Amp
from stabfix.model.domain.cleanup import DeviceMemory
from stabfix.model.domain.containers import Containers
from stabfix.model.domain.device_caches import DeviceCaches
from stabfix.model.domain.distributed import Distributed
from stabfix.model.domain.generation import Generation
from stabfix.model.domain.grad_clears import GradClears
from stabfix.model.domain.host_sync import HostSyncs
from stabfix.model.domain.checkpoint_files import CheckpointFiles
from stabfix.model.domain.log_prob_picks import LogProbPicks
from stabfix.model.flow.loss_operand_values import LossOperandValues
from stabfix.model.domain.loss_targets import LossTargets
from stabfix.model.domain.objective_targets import ObjectiveTargets
from stabfix.model.domain.optimizer_tensors import OptimizerTensors
from stabfix.model.domain.randomness import Randomness
from stabfix.model.flow.flows import ValueFlows
from stabfix.model.flow.gradient_use import GradientFacts
from stabfix.model.flow.graph_cuts import GraphCuts
from stabfix.model.flow.history import History
from stabfix.model.flow.later_uses import LaterUses
from stabfix.model.flow.recurrence import Recurrence
from stabfix.model.flow.tensor_identity import TensorFacts
from stabfix.model.flow.returned_values import returned_values, trained_parameters
from stabfix.model.flow.values import Values
from stabfix.model.functions.call_events import EventsThroughCalls
from stabfix.model.functions.summaries import Summaries
from stabfix.model.source.container_fills import ContainerFills
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.names import Names
from stabfix.model.source.tree_index import TreeIndex
from stabfix.model.domain.evaluations import Evaluations
from stabfix.model.training.accumulation import AccumulationIndex
from stabfix.model.training.carried import CarriedStates
from stabfix.model.training.modes import ModeSwitches
from stabfix.model.training.running_totals import RunningTotals
from stabfix.model.training.structure import StepIndex

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ProjectQueries

# Every part: the parts it reads, and how to build it. The order is the build and traversal order,
# so a part comes after everything it reads.
_PARTS: dict[str, tuple[tuple[str, ...], Callable[["FileModel"], object]]] = {
    "names": ((), lambda model: Names()),
    "modules": (("names",), lambda model: ModuleIndex(model.imports, model.names)),
    "optimizers": (("names",), lambda model: OptimizerTracker(model.imports, model.enclosing, model.names)),
    "classes": (("names", "modules"), lambda model: ModuleClasses(model.names, model.project, model.modules)),
    "container_fills": ((), lambda model: ContainerFills(model.enclosing)),
    "values": (("names", "modules", "optimizers"),
               lambda model: _with_foreign_values(model, Values(model.names, model.modules, model.optimizers, model.tree.calls))),
    "steps": (("names", "values"), lambda model: StepIndex(model.imports, model.enclosing, model.names, model.values)),
    "containers": (("steps", "names"), lambda model: Containers(model.imports, model.steps, model.names, model.project)),
    "events": (("names",), lambda model: Events(model.imports, model.names, model.enclosing)),
    "memory": (("names",), lambda model: DeviceMemory(model.imports, model.names)),
    "randomness": (("names",), lambda model: Randomness(model.imports, model.enclosing, model.names)),
    "losses": (("names",), lambda model: LossIndex(model.imports, model.enclosing, model.names, model.project)),
    "gradients": (("losses",), lambda model: GradientFacts(model.losses, model.enclosing)),
    "tensors": (("losses",), lambda model: TensorFacts(model.losses, model.enclosing)),
    "loss_operand_values": (("tensors",), lambda model: LossOperandValues(model.tensors)),
    "activations": (("names",), lambda model: Activations(model.imports, model.names, model.project)),
    "cuts": (("values",), lambda model: GraphCuts(model.imports, model.enclosing, model.values)),
    "accumulation": (
        ("events", "optimizers", "losses"),
        lambda model: AccumulationIndex(model.events, model.optimizers, model.losses),
    ),
    "flows": (("names",), lambda model: ValueFlows(model.names, model.tree)),
    "recurrence": (("names",), lambda model: Recurrence(model.names)),
    "distributed": (
        ("names", "flows", "events"),
        lambda model: Distributed(model.imports, model.names, model.flows, model.project, model.events),
    ),
    "amp": (("names", "steps"), lambda model: Amp(model.names, model.steps)),
    "syncs": (("values", "modules"), lambda model: HostSyncs(model.values, model.modules)),
    "generation": (("names", "modules"), lambda model: Generation(model.names, model.modules)),
    "history": (
        ("names", "values", "losses", "events"),
        lambda model: History(model.names, model.values, model.losses, model.events),
    ),
    "uses": (
        ("names", "events", "optimizers"),
        lambda model: LaterUses(model.names, model.events, model.optimizers, model.tree),
    ),
    "modes": (
        ("names", "steps", "modules", "events", "classes"),
        lambda model: _with_classes(
            ModeSwitches(model.imports, model.names, model.steps, model.modules, model.enclosing, model.events), model),
    ),
    "summaries": (
        ("names", "values", "history", "activations", "modes", "events", "gradients"),
        lambda model: _with_foreign_summaries(
            model, Summaries(model.imports, model.names, model.values, model.history, model.activations,
                             model.modes, model.events, model.gradients)),
    ),
    "evaluations": (
        ("names", "values", "modules", "modes", "events", "history", "summaries"),
        lambda model: Evaluations(model.names, model.values, model.modules, model.modes, model.events, model.history,
                                  model.summaries),
    ),
    # the `events` queries with what each called function runs spliced in at its call (event-order rules)
    "events_through_calls": (("events", "summaries"), lambda model: _events_through_calls(model)),
    "grad_clears": (
        ("names", "optimizers", "events", "summaries", "events_through_calls"),
        lambda model: GradClears(model.imports, model.names, model.optimizers, model.events, model.summaries,
                                 model.events_through_calls),
    ),
    "optimizer_tensors": (("names", "events_through_calls"),
                          lambda model: OptimizerTensors(model.names, model.events_through_calls)),
    # after `summaries`: a helper that detaches the state cuts it too
    "carried": (("names", "events", "summaries"), lambda model: CarriedStates(model.names, model.events, model.summaries)),
    "objective_targets": (("names", "history"), lambda model: ObjectiveTargets(model.names, model.history)),
    "device_caches": (("containers", "values"), lambda model: DeviceCaches(model.containers, model.values)),
    "running_totals": (("names", "steps"), lambda model: RunningTotals(model.enclosing, model.names, model.steps)),
    "checkpoint_files": (("names", "flows", "values"), lambda model: CheckpointFiles(model.names, model.flows, model.values)),
    "log_prob_picks": (("names", "amp"), lambda model: LogProbPicks(model.names, model.amp)),
    "loss_targets": (
        ("names", "losses", "gradients", "summaries", "objective_targets"),
        lambda model: LossTargets(model.imports, model.enclosing, model.names, model.losses, model.gradients, model.summaries,
                                  model.objective_targets),
    ),
}
PARTS = tuple(_PARTS)


def _with_classes(modes: ModeSwitches, model: "FileModel") -> ModeSwitches:
    modes.classes = model.classes  # a method called on a switched module of unshown class is looked up there
    return modes


def _with_foreign_summaries(model: "FileModel", summaries: Summaries) -> Summaries:
    """Calls of another scanned file's functions and classes are summarised by that file's own model
    (one file away: that model has no project of its own, so following stops there)."""
    if model.losses is not None:  # a loss handed to a function as an argument (`train(..., nn.L1Loss())`)
        model.losses.parameter_values = summaries.passed_for
    if model.accumulation is not None:  # a helper that runs `zero_grad()` on every pass: no accumulation
        model.accumulation.call_clears = lambda call: any(e.kind == "zero_grad" for e in summaries.effects_at(call))
        # a helper's step under the `% N` gate, or its clear on every pass, counts where it is called
        model.accumulation.events = EventsThroughCalls(model.accumulation.events, summaries)
    if model.project is not None:
        summaries.foreign = model.project.foreign_hook(_summary_of_definition, needs=("summaries",))
        summaries.foreign_function = model.project.foreign_hook(
            _summary_of_definition, needs=("summaries",), kinds=("def", "method"))
    return summaries


def _events_through_calls(model: "FileModel") -> EventsThroughCalls:
    """The view `_with_foreign_summaries` gave the `accumulation` part when it is of the same events and
    summaries: each of the file's calls is then looked up and spliced once, not once per view."""
    view = model.accumulation.events if model.accumulation is not None else None
    if isinstance(view, EventsThroughCalls) and view.summaries is model.summaries and view.spliced_into is model.events:
        return view
    return EventsThroughCalls(model.events, model.summaries)


# The parts whose building hands other parts something that changes their answers (`_with_foreign_summaries`,
# and `Summaries` itself on `activations`); the hooks a project adds are left out: they are set only on a
# model built with a project.
_REWIRES: dict[str, tuple[str, ...]] = {"summaries": ("losses", "accumulation", "activations")}


def _rewired_by(parts: set[str], part: str) -> set[str]:
    return {rewiring for rewiring in parts if part in _REWIRES.get(rewiring, ())}


def answers_alike(built: Iterable[str], wanted: Iterable[str]) -> bool:
    """A model built without a project with the parts `built` answers every question about the parts
    `wanted` (and what they read) as one built with exactly those would: it has them all, and none of
    its other parts rewires one of them. Another file's `values` asked of its model built for
    `summaries` is the same answer; its `losses` is not (`summaries` hands them what callers pass)."""
    return _alike(set(built), required_parts(wanted), required_parts(wanted))


def _alike(built: set[str], asked: set[str], wanted: set[str]) -> bool:
    """The parts `asked` (with what they read) of a model built with `built` answer as in one built with
    `wanted`: rewired by the same parts."""
    return asked <= built and all(_rewired_by(built, part) == _rewired_by(wanted, part) for part in asked)


def built_riding(beside: Iterable[str], needs: Iterable[str]) -> Optional[frozenset[str]]:
    """The parts a model of `needs` riding in the traversal of one built with `beside` (`FileModel(beside=)`)
    builds itself; it takes the others, which answer alike. None when it cannot ride: a part it builds
    would rewire one it takes."""
    built, wanted = set(beside), required_parts(needs)
    own = frozenset(part for part in wanted if not _alike(built, required_parts([part]), wanted))
    taken = wanted - own
    return None if any(rewired in taken for part in own for rewired in _REWIRES.get(part, ())) else own


def _with_foreign_values(model: "FileModel", values: Values) -> Values:
    """What a function of another scanned file returns is that file's values' answer (one file away)."""
    if model.project is not None:
        values.foreign_returns = model.project.foreign_hook(_returned_values_of, needs=("values",), kinds=("def",))
        values.foreign_trained = model.project.foreign_hook(_trained_parameters_of, needs=("values",), kinds=("def",))
    return values


def _returned_values_of(definition) -> Optional[object]:
    node = definition.node
    return returned_values(definition.model.values, node) if type(node) is cst.FunctionDef else None


def _trained_parameters_of(definition) -> Optional[object]:
    node = definition.node
    return trained_parameters(definition.model.values, node) if type(node) is cst.FunctionDef else None


def _summary_of_definition(definition) -> Optional[object]:
    summaries = definition.model.summaries
    if summaries is None:
        return None
    if type(definition.node) is cst.ClassDef:  # each half read when first asked, a failure read as unknown
        cls = summaries.of_class(definition.node)
        return replace(cls, methods=tuple((name, method.guarded()) for name, method in cls.methods))
    return summaries.of(definition.node).guarded()


ALWAYS_BUILT = ("tree", "enclosing", "imports")  # every part and rule may read these


def required_parts(needs: Iterable[str]) -> set[str]:
    """The parts named in `needs` and every part they read, transitively."""
    wanted = set(needs)
    unknown = wanted - set(PARTS)
    if unknown:
        raise ValueError(f"unknown model parts: {sorted(unknown)}")
    pending = list(wanted)
    while pending:
        for required in _PARTS[pending.pop()][0]:
            if required not in wanted:
                wanted.add(required)
                pending.append(required)
    return wanted


class FileModel:
    names: Optional[Names] = None
    steps: Optional[StepIndex] = None
    optimizers: Optional[OptimizerTracker] = None
    modules: Optional[ModuleIndex] = None
    classes: Optional[ModuleClasses] = None
    container_fills: Optional[ContainerFills] = None
    values: Optional[Values] = None
    containers: Optional[Containers] = None
    events: Optional[Events] = None
    memory: Optional[DeviceMemory] = None
    losses: Optional[LossIndex] = None
    gradients: Optional[GradientFacts] = None
    tensors: Optional[TensorFacts] = None
    activations: Optional[Activations] = None
    accumulation: Optional[AccumulationIndex] = None
    cuts: Optional[GraphCuts] = None
    carried: Optional[CarriedStates] = None
    events_through_calls: Optional[EventsThroughCalls] = None
    grad_clears: Optional[GradClears] = None
    optimizer_tensors: Optional[OptimizerTensors] = None
    flows: Optional[ValueFlows] = None
    recurrence: Optional[Recurrence] = None
    distributed: Optional[Distributed] = None
    amp: Optional[Amp] = None
    syncs: Optional[HostSyncs] = None
    generation: Optional[Generation] = None
    history: Optional[History] = None
    modes: Optional[ModeSwitches] = None
    uses: Optional[LaterUses] = None
    summaries: Optional[Summaries] = None
    randomness: Optional[Randomness] = None
    checkpoint_files: Optional[CheckpointFiles] = None
    running_totals: Optional[RunningTotals] = None
    device_caches: Optional[DeviceCaches] = None
    log_prob_picks: Optional[LogProbPicks] = None
    loss_operand_values: Optional[LossOperandValues] = None
    loss_targets: Optional[LossTargets] = None
    objective_targets: Optional[ObjectiveTargets] = None
    evaluations: Optional[Evaluations] = None

    def __init__(self, needs: Iterable[str] = (), project: Optional["ProjectQueries"] = None,
                 beside: Optional["FileModel"] = None) -> None:
        """`beside`: a model without a project (nor this one) whose traversal this one rides in: it takes
        that model's parts that answer alike (`answers_alike`) and builds only the others, whose
        visitors (`visitors()`) go into the same traversal after that model's."""
        wanted = required_parts(needs)
        own = built_riding(beside.parts, wanted) if beside is not None else frozenset(wanted)
        if own is None or (beside is not None and (project is not None or beside.project is not None)):
            raise ValueError("this model cannot ride in that one's traversal")
        # the other files of the scan as this file sees them (stabfix.project); None: this file alone
        self.project = project
        self._rides = beside is not None
        self.imports = beside.imports if beside is not None else ImportTracker()
        self.enclosing = beside.enclosing if beside is not None else EnclosingDefinitions()
        # parents and calls; the traversal fills `tree.parents` when handed it (`walk(..., parents=)`)
        self.tree = beside.tree if beside is not None else TreeIndex()
        self._built: list[object] = []
        # name -> part, the always-built ones included: what fault isolation reports a failure by
        self.parts: dict[str, object] = {"tree": self.tree, "enclosing": self.enclosing, "imports": self.imports}
        for part in PARTS:
            if part in wanted:
                if part not in own:
                    built = beside.parts[part]  # type: ignore[union-attr]
                else:
                    built = _PARTS[part][1](self)
                    self._built.append(built)
                setattr(self, part, built)
                self.parts[part] = built

    def visitors(self) -> list[cst.BatchableCSTVisitor]:
        """The parts that ride in the traversal, ahead of the checkers, in dependency order; the
        enclosing definitions first, so every other part and checker can ask for them."""
        parts = [part for part in self._built if isinstance(part, cst.BatchableCSTVisitor)]
        return parts if self._rides else [self.tree, self.enclosing, self.imports, *parts]
