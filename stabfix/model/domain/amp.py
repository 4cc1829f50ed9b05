"""Mixed precision and autograd debugging: autocast regions with their dtype, loss scaling, anomaly mode.

The model's `amp` part (built on `names` and `steps`; a checker declares `needs = ("amp",)`). During
the single traversal it records, with the `steps` frames around each (a decorator counts as inside
the function it decorates):

- `regions`    every autocast: `torch.autocast(...)`, `torch.amp.autocast(...)`, the legacy
               `torch.cuda.amp.autocast(...)` / `torch.cpu.amp.autocast(...)`, however imported, as a
               `with` item, a decorator or a plain call; `dtype(region)` says what it computes in
               (an explicit `dtype=`, the API's default, a name or a config field followed through the
               file's bindings), `enabled(region)` whether it is switched off by a literal `False`;
- `scaling()`  how the file scales its loss, if it does: a `GradScaler` (torch.cuda.amp, torch.amp,
               `ShardedGradScaler`, any imported `*GradScaler`) built and not disabled by a literal,
               `x.scale(loss).backward()`, `scaler.unscale_(opt)`, apex `amp.scale_loss`, a scaler object
               called with the loss (timm's `loss_scaler(loss, optimizer)`), or a backward through a
               wrapper that scales itself (`accelerator.backward(loss)`, DeepSpeed/Fabric `.backward(loss)`,
               Lightning's `self.manual_backward(loss)`);
- `anomaly`    every anomaly-mode switch: `torch.autograd.set_detect_anomaly(...)` (also
               `torch.autograd.anomaly_mode.*`), `torch.autograd.detect_anomaly(...)`, and Lightning's
               `Trainer(detect_anomaly=...)`, with whether a literal turns it on, off, or a setting decides;
- `legacy_api(expression)` the deprecated `torch.cuda.amp`/`torch.cpu.amp` entry point an expression
               names (`autocast`, `GradScaler`, `custom_fwd`, `custom_bwd`), through imports and aliases;
               `legacy_uses` lists every call, decorator and bare reference of one, and `import_of(alias)`
               the import statement an alias belongs to (a from-import is rewritten as a whole);
- `local_calls(name)` the frames of every call of a same-file function or `self` method by that name
               (is a helper reached on every step, or only behind a gate?);
- `autocast_around(frames, place)` the enabled region a site runs in (a `with` around it, a decorator of a
               function around it), and `called_under_autocast(function)` the region around a call of a
               same-file function (`helper(x)`, `self.method(x)`) made in this file, one call deep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

from stabfix.model.calls.backward_wrappers import wraps_backward
from stabfix.model.domain.dtype_values import DtypeValues
from stabfix.model.domain.version_tests import is_version_test
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import GRAD_OFF_CONTEXTS, Names
from stabfix.model.source.places import Place, body_of, enclosing_statement, position_in
from stabfix.model.source.syntax import node_code
from stabfix.model.source.vocabulary import FRAMEWORK_STEP_BASE, SCALER_CLASSES, SCALER_NAME
from stabfix.model.training.step_frames import BranchFrame, ClassFrame, Frame, FunctionFrame
from stabfix.model.training.structure import StepIndex

# autocast entry point -> (its device when the API fixes one, positional parameters after the device)
AUTOCAST_APIS: dict[str, tuple[Optional[str], tuple[str, ...]]] = {
    "torch.autocast": (None, ("device_type", "dtype", "enabled", "cache_enabled")),
    "torch.amp.autocast": (None, ("device_type", "dtype", "enabled", "cache_enabled")),
    "torch.amp.autocast_mode.autocast": (None, ("device_type", "dtype", "enabled", "cache_enabled")),
    "torch.cuda.amp.autocast": ("cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cuda.amp.autocast_mode.autocast": ("cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("cpu", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast_mode.autocast": ("cpu", ("enabled", "dtype", "cache_enabled")),
}
# the dtype autocast uses when none is given, per device (torch.get_autocast_dtype's defaults)
_DEFAULT_DTYPE = {"cpu": "bfloat16", "xpu": "bfloat16", "hpu": "bfloat16", "xla": "bfloat16", "cuda": "float16", "mps": "float16"}
_DTYPE_STRINGS = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}
# deprecated entry point -> (device, its name under torch.amp)
LEGACY_APIS: dict[str, tuple[str, str]] = {
    f"torch.{device}.amp.{module}{name}": (device, name)
    for device in ("cuda", "cpu")
    for name, module in (
        ("autocast", ""), ("autocast", "autocast_mode."), ("GradScaler", ""), ("GradScaler", "grad_scaler."),
        ("custom_fwd", ""), ("custom_bwd", ""), ("custom_fwd", "autocast_mode."), ("custom_bwd", "autocast_mode."),
    )
    if not (device == "cpu" and name.startswith("custom"))
}
LEGACY_MODULES = {"torch.cuda.amp": "cuda", "torch.cpu.amp": "cpu"}
_ANOMALY_SWITCHES = {
    "torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly",
    "torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly",
}
_LIGHTNING_TRAINERS = ("pytorch_lightning.Trainer", "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer", "pytorch_lightning.trainer.Trainer")
_MISSING_API_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError", "TypeError")

@dataclass(eq=False)
class Site:
    node: cst.CSTNode  # the call, or the bare expression of a decorator / reference
    frames: tuple[Frame, ...]
    place: Place
    how: str  # "with" | "decorator" | "call" | "reference"


@dataclass(eq=False)
class AutocastRegion(Site):
    api: str = ""
    factory: bool = False  # `functools.partial(torch.autocast, ...)`: the API is its first argument, entered by calling it

    @property
    def call(self) -> cst.Call:
        return self.node  # type: ignore[return-value]


@dataclass(eq=False)
class AnomalySwitch(Site):
    api: str = ""
    mode: str = "on"  # "on" (a literal turns it on, or `detect_anomaly()`), "off", "setting"
    argument: Optional[cst.Arg] = None  # the argument that decides, if any


@dataclass(eq=False)
class LegacyUse(Site):
    api: str = ""


class Amp(cst.BatchableCSTVisitor):
    def __init__(self, names: Names, steps: StepIndex) -> None:
        super().__init__()
        self.names = names
        self.steps = steps
        self._calls: list[tuple[cst.Call, tuple[Frame, ...], Place, str]] = []
        self._references: list[tuple[cst.BaseExpression, tuple[Frame, ...], Place, str]] = []
        self._with_items: set[int] = set()
        self._decorators: set[int] = set()
        self._callees: set[int] = set()
        self._annotations = 0
        self._entered: list[tuple[cst.Name, tuple[Frame, ...]]] = []
        self._imports: dict[int, Union[cst.Import, cst.ImportFrom]] = {}
        self._local_calls: dict[str, list[tuple[Frame, ...]]] = {}
        self._local_call_sites: list[tuple[cst.Call, tuple[Frame, ...], Place]] = []
        self._sites_by_definition: Optional[dict[int, list[tuple[tuple[Frame, ...], Place]]]] = None
        self._resolved = False
        # each enabled region with the `with` statement or decorated function it covers, found once
        # (`autocast_around` is asked per site and per same-file call of the site's function)
        self._covers: Optional[list[tuple[AutocastRegion, bool, int]]] = None
        self.regions: list[AutocastRegion] = []
        self.anomaly: list[AnomalySwitch] = []
        self.legacy_uses: list[LegacyUse] = []
        self._scaling: list[str] = []
        self._dtypes = DtypeValues(names)

    # -- traversal -------------------------------------------------------------------------------------
    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._with_items.add(id(node.item))
        if type(node.item) is cst.Name:  # `ctx = torch.autocast(...)` built once, `with ctx:` every step
            self._entered.append((node.item, self.steps.frames()))
        elif type(node.item) is cst.Call and type(node.item.func) is cst.Name:
            self._entered.append((node.item.func, self.steps.frames()))  # `with amp_autocast():` of a partial

    def visit_Import(self, node: cst.Import) -> None:
        self._imports.update({id(alias): node for alias in node.names})

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if type(node.names) is not cst.ImportStar:
            self._imports.update({id(alias): node for alias in node.names})

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        # decorators run for the function: they take its frames (the `steps` part has entered it)
        frames, place = self.steps.frames(), self.steps.place()
        for decorator in node.decorators:
            expression = decorator.decorator
            self._decorators.add(id(expression))
            if type(expression) is cst.Call:
                self._calls.append((expression, frames, place, "decorator"))
            elif _last_name(expression) is not None:
                self._references.append((expression, frames, place, "decorator"))

    def visit_Call(self, node: cst.Call) -> None:
        last = _last_name(node.func)
        func = node.func
        if type(func) is cst.Name or (type(func) is cst.Attribute and dotted_name(func.value) == "self"):
            self._local_calls.setdefault(last or "", []).append(self.steps.frames())
            self._local_call_sites.append((node, self.steps.frames(), self.steps.place()))
        self._callees.add(id(func))
        if id(node) in self._decorators or last is None:
            return
        if type(func) in (cst.Name, cst.Attribute):  # any of them may be an alias (`mixed = autocast`)
            how = "with" if id(node) in self._with_items else "call"
            self._calls.append((node, self.steps.frames(), self.steps.place(), how))

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotations += 1

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self._annotations -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._annotations:
            return  # `scaler: torch.cuda.amp.GradScaler | None`: a type, never called from here
        if node.attr.value in ("autocast", "GradScaler") and id(node) not in self._decorators and id(node) not in self._callees:
            self._references.append((node, self.steps.frames(), self.steps.place(), "reference"))

    # -- queries ---------------------------------------------------------------------------------------
    def qualify(self, expression: cst.BaseExpression) -> Optional[str]:
        return self.names.qualify(expression)

    def legacy_api(self, expression: cst.BaseExpression) -> Optional[str]:
        qualified = self.qualify(expression)
        return qualified if qualified in LEGACY_APIS else None

    def import_of(self, alias: cst.CSTNode) -> Optional[Union[cst.Import, cst.ImportFrom]]:
        return self._imports.get(id(alias))

    def local_calls(self, name: str) -> list[tuple[Frame, ...]]:
        return self._local_calls.get(name, [])

    def autocast_around(self, frames: tuple[Frame, ...], place: Place) -> Optional[AutocastRegion]:
        """The enabled autocast region a site with these frames and place runs in: a `with` statement
        around it or a decorator of a function around it (`ctx = autocast(...); with ctx:` is not followed)."""
        covers = self._region_covers()
        if not covers:
            return None
        functions = {id(frame.node) for frame in frames if isinstance(frame, FunctionFrame)}
        statements = {id(node) for node in place}
        for region, by_with, covered in covers:
            if covered in (statements if by_with else functions):
                return region
        return None

    def _region_covers(self) -> list[tuple[AutocastRegion, bool, int]]:
        """(region, whether a `with` enters it, the id of that `with` or of the function it decorates) for
        each enabled region that covers a statement or a function, in the regions' order."""
        if self._covers is None:
            self._resolve()
            self._covers = []
            for region in self.regions:
                if not self.enabled(region):
                    continue
                if region.how == "with":
                    statement = enclosing_statement(region.place)
                    if type(statement) is cst.With:
                        self._covers.append((region, True, id(statement)))
                elif region.how == "decorator":
                    decorated = next((frame for frame in reversed(region.frames) if isinstance(frame, FunctionFrame)), None)
                    if decorated is not None:
                        self._covers.append((region, False, id(decorated.node)))
        return self._covers

    def called_under_autocast(self, function: cst.FunctionDef) -> Optional[AutocastRegion]:
        """The enabled autocast region around a call of `function` (a same-file function or `self` method)
        made in this file, if any call is in one."""
        if self._sites_by_definition is None:  # resolved once: rules ask this for every candidate
            self._sites_by_definition = {}
            for call, frames, place in self._local_call_sites:
                definition = self.names.definition_of(call)
                if definition is not None:
                    self._sites_by_definition.setdefault(id(definition), []).append((frames, place))
        for frames, place in self._sites_by_definition.get(id(function), ()):
            region = self.autocast_around(frames, place)
            if region is not None:
                return region
        return None

    def scaling(self) -> list[str]:
        """How the file scales its loss (empty: it does not), e.g. `GradScaler(...)`, `accelerator.backward`."""
        self._resolve()
        return self._scaling

    def device(self, region: AutocastRegion) -> Optional[str]:
        """The device the region casts on: the API's own, or a literal `device_type`; None when unknown."""
        fixed, _ = AUTOCAST_APIS[region.api]
        if fixed is not None:
            return fixed
        value = self.argument(region, "device_type")
        if type(value) is cst.SimpleString:
            return value.evaluated_value.split(":")[0] if isinstance(value.evaluated_value, str) else None
        return None

    def argument(self, region: AutocastRegion, parameter: str) -> Optional[cst.BaseExpression]:
        call = region.call.with_changes(args=region.call.args[1:]) if region.factory else region.call
        arg = argument_of(call, AUTOCAST_APIS[region.api][1], parameter)
        return arg.value if arg is not None else None

    def entered(self, region: AutocastRegion) -> list[tuple[Frame, ...]]:
        """The frames of every `with <name>:` that enters the region built earlier (`ctx = autocast(...)`,
        also as one side of a choice: `ctx = nullcontext() if on_cpu else autocast(...)`)."""
        return [
            frames
            for name, frames in self._entered
            if any(_holds(binding.bound_value, region.call) for binding in self.names.reaching(name))
        ]

    def grad_off(self, region: AutocastRegion) -> bool:
        """The region runs under `no_grad`/`inference_mode` (a block around it or the function's decorator)."""
        root = region.call.func
        while type(root) is cst.Attribute:
            root = root.value
        use = self.names.uses.get(root) if type(root) is cst.Name else None
        if use is not None and use.grad_off:
            return True
        statement = enclosing_statement(region.place)  # `with torch.no_grad(), torch.autocast(...):`
        return type(statement) is cst.With and any(
            type(item.item) is cst.Call and self.qualify(item.item.func) in GRAD_OFF_CONTEXTS
            for item in statement.items
        )

    def enabled(self, region: AutocastRegion) -> bool:
        """False only when a literal switches the region off (`autocast(enabled=False)`)."""
        value = self.argument(region, "enabled")
        return not (type(value) is cst.Name and value.value == "False")

    def dtype(self, region: AutocastRegion) -> tuple[Optional[str], Optional[cst.BaseExpression]]:
        """(`float16`/`bfloat16`/`float32` or None when unknown, the expression that decides it: the
        `dtype=` argument or the one binding it comes from; None when the API's default decides)."""
        if any(arg.star for arg in region.call.args):
            return None, None  # `autocast(**amp_kwargs)`: the dtype may be in there
        explicit = self.argument(region, "dtype")
        if explicit is None or (type(explicit) is cst.Name and explicit.value == "None"):
            if any(isinstance(frame, ClassFrame) and _framework_class(frame) for frame in region.frames):
                return None, None  # a framework's own autocast is around its step: the default carries its dtype
            device = self.device(region)
            return _DEFAULT_DTYPE.get(device, "float16") if device is not None else "float16", None
        sources: list[cst.BaseExpression] = []
        found = self._dtypes.of(explicit, sources)
        return found, (sources[0] if len(sources) == 1 else None)

    def in_version_fallback(self, site: Site) -> bool:
        """In a branch chosen by the torch version or by what torch provides (`hasattr(torch, "amp")`),
        or after an `if <such a test>: return ...` of the same block: an older release's fallback."""
        for frame in site.frames:
            if isinstance(frame, BranchFrame) and type(frame.node) in (cst.If, cst.IfExp):
                if is_version_test(self.names, frame.node.test):
                    return True
            if isinstance(frame, BranchFrame) and type(frame.node) is cst.ExceptHandler and frame.node.type is not None:
                if _catches_missing_api(frame.node.type):
                    return True  # `except ImportError:` / `except AttributeError:` after trying torch.amp
        for node in site.place:
            if site.how == "reference" and type(node) is cst.Try and any(
                handler.type is not None and _catches_missing_api(handler.type) for handler in node.handlers
            ):
                return True  # `try: _ = torch.cpu.amp.autocast except AttributeError:` probes what torch has
        for index, node in enumerate(site.place):
            if index == 0 or not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                continue
            siblings = body_of(site.place[index - 1])
            position = position_in(siblings, node)
            for earlier in siblings[: position or 0]:
                if type(earlier) is cst.If and is_version_test(self.names, earlier.test) and _leaves(earlier.body):
                    return True
        return False

    # -- resolution (after the traversal) -------------------------------------------------------------
    def _resolve(self) -> None:
        if self._resolved:
            return
        self._resolved = True
        for call, frames, place, how in self._calls:
            qualified = self.qualify(call.func) or ""
            if qualified in AUTOCAST_APIS:
                self.regions.append(AutocastRegion(call, frames, place, how, qualified))
            elif qualified == "functools.partial" and call.args and call.args[0].keyword is None and not call.args[0].star:
                made = self.qualify(call.args[0].value) or ""
                if made in AUTOCAST_APIS:
                    self.regions.append(AutocastRegion(call, frames, place, "call", made, factory=True))
            if qualified in LEGACY_APIS:
                self.legacy_uses.append(LegacyUse(call, frames, place, how, qualified))
            if qualified in _ANOMALY_SWITCHES or qualified in _LIGHTNING_TRAINERS:
                switch = _anomaly_switch(call, qualified, frames, place, how)
                if switch is not None:
                    self.anomaly.append(switch)
            scaled = self._scales(call, qualified)
            if scaled:
                self._scaling.append(scaled)
        for expression, frames, place, how in self._references:
            qualified = self.qualify(expression) or ""
            if qualified in LEGACY_APIS:
                self.legacy_uses.append(LegacyUse(expression, frames, place, how, qualified))

    def _builds_scaler(self, call: cst.Call, qualified: str) -> bool:
        last = _last_name(call.func) or ""
        return qualified.rsplit(".", 1)[-1] in SCALER_CLASSES or (not qualified and last in SCALER_CLASSES)

    def _disabled(self, scaler: cst.BaseExpression) -> bool:
        """`scaler` only ever holds a scaler switched off by a literal (`GradScaler(enabled=False)`)."""
        if type(scaler) is cst.Name:
            values = [binding.bound_value for binding in self.names.reaching(scaler)]
        elif type(scaler) is cst.Attribute:
            values = self._dtypes.field_values(scaler)
        else:
            return False
        return bool(values) and all(
            type(value) is cst.Call and self._builds_scaler(value, self.qualify(value.func) or "") and _disabled_scaler(value)
            for value in values
        )

    def _scales(self, call: cst.Call, qualified: str) -> Optional[str]:
        func, last = call.func, _last_name(call.func) or ""
        if self._builds_scaler(call, qualified):
            return None if _disabled_scaler(call) else f"`{dotted_name(func) or last}(...)`"
        if qualified.endswith("amp.scale_loss") or qualified.endswith("amp.initialize"):
            return f"`{qualified}`"  # apex
        if last == "backward" and type(func) is cst.Attribute:
            receiver = func.value
            if type(receiver) is cst.Call and _last_name(receiver.func) == "scale":
                scaler = receiver.func.value if type(receiver.func) is cst.Attribute else None
                return None if scaler is not None and self._disabled(scaler) else f"`{dotted_name(receiver.func) or 'scale'}(...)`"
            if call.args and wraps_backward(self.names, receiver):
                return f"`{dotted_name(func)}(...)`"
        if last == "manual_backward" or last == "unscale_":
            return f"`{dotted_name(func) or last}(...)`"
        if SCALER_NAME.search(last) and not qualified and type(func) in (cst.Name, cst.Attribute) and call.args:
            return f"`{dotted_name(func) or last}(...)`"  # a scaler object called with the loss
        return None


def _disabled_scaler(call: cst.Call) -> bool:
    enabled = argument_of(call, ("init_scale",), "enabled")
    return enabled is not None and type(enabled.value) is cst.Name and enabled.value.value == "False"


def argument_of(call: cst.Call, positional: tuple[str, ...], parameter: str) -> Optional[cst.Arg]:
    """The argument passed for `parameter`, by keyword or by position (`positional` lists the order)."""
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == parameter:
                return arg
            continue
        if position < len(positional) and positional[position] == parameter:
            return arg
        position += 1
    return None


def _anomaly_switch(call: cst.Call, qualified: str, frames, place, how) -> Optional[AnomalySwitch]:
    if qualified in _LIGHTNING_TRAINERS:
        arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "detect_anomaly"), None)
        if arg is None:
            return None
    elif qualified.endswith(".detect_anomaly"):
        return AnomalySwitch(call, frames, place, how, qualified, "on", None)
    else:
        arg = argument_of(call, ("mode", "check_nan"), "mode")
        if arg is None:
            return None
    value = arg.value
    mode = "setting"
    if type(value) is cst.Name and value.value in ("True", "False"):
        mode = "on" if value.value == "True" else "off"
    elif type(value) is cst.Integer:
        mode = "on" if value.value != "0" else "off"
    return AnomalySwitch(call, frames, place, how, qualified, mode, arg)


def _framework_class(frame: ClassFrame) -> bool:
    return any(FRAMEWORK_STEP_BASE.search(base.rsplit(".", 1)[-1]) for base in frame.bases)


def _catches_missing_api(caught: cst.BaseExpression) -> bool:
    code = node_code(caught)
    return any(error in code for error in _MISSING_API_ERRORS)




def _leaves(body: cst.BaseSuite) -> bool:
    statements = body_of(body)
    last = statements[-1] if statements else None
    if type(last) is cst.SimpleStatementLine:
        last = last.body[-1] if last.body else None
    return type(last) in (cst.Return, cst.Raise) or (
        type(body) is cst.SimpleStatementSuite and type(body.body[-1]) in (cst.Return, cst.Raise)
    )


def _last_name(expression: cst.BaseExpression) -> Optional[str]:
    if type(expression) is cst.Name:
        return expression.value
    if type(expression) is cst.Attribute:
        return expression.attr.value
    return None


def _holds(value: Optional[cst.BaseExpression], call: cst.Call) -> bool:
    """`value` is the call, or a conditional expression one of whose sides is (nested choices included)."""
    if value is call:
        return True
    if type(value) is cst.IfExp:
        return _holds(value.body, call) or _holds(value.orelse, call)
    return False
