"""The `verify` settings: read from the config section, overridden by CLI flags, validated.

Pure Python (no torch): the CLI imports this at startup.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

VERIFY_KEYS = ("entry", "steps", "warmup", "seed", "device", "timeout", "budgets", "estimate")
BUDGET_KEYS = (
    "peak_memory_mb",
    "memory_growth_mb_per_step",
    "grad_norm",
    "step_time_ms",
    "trainable_params",
)
DEFAULTS: dict[str, Any] = {
    "entry": None,
    "steps": 10,
    "warmup": 2,
    "seed": 0,
    "device": "auto",
    "timeout": 300.0,
    "exact_steps": "auto",  # which steps run under exact per-op accounting: auto (a few) or all
}
EXACT_STEPS = ("auto", "all")
VERIFY_KEYS += ("exact_steps", "run", "nproc_per_node")
MB = 1024 * 1024  # budgets and reports use MiB; the config keys keep the short `_mb` suffix


class SettingsError(Exception):
    """Bad verify settings: the message names the key (exit code 2)."""


class FlagError(SettingsError):
    """A bad command-line value: the message names the flag, and no config file is to blame."""


@dataclass
class Settings:
    entry: str | None  # None when `run` is given
    steps: int = 10
    warmup: int = 2
    seed: int = 0
    device: str = "auto"
    timeout: float = 300.0
    budgets: dict[str, float] = field(default_factory=dict)
    exact_steps: str = "auto"
    run: list[str] | None = None  # the training command (`verify -- python train.py`), instead of an entry
    nproc_per_node: int | None = None  # run the command on this many local ranks through torchrun

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not _is_int(value):
        raise SettingsError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise SettingsError(f"{name} must be >= {minimum}, got {value}")
    return value


def _as_number(key: str, value: Any, *, positive: bool) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise SettingsError(f"{key} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise SettingsError(f"{key} must be a number, got {value!r}")
    if positive and value <= 0:
        raise SettingsError(f"{key} must be > 0, got {value}")
    if value < 0:
        raise SettingsError(f"{key} must be >= 0, got {value}")
    return float(value)


def normalize_budget_key(key: str) -> str:
    return key.strip().replace("-", "_")


def parse_budget_flags(items: list[str]) -> dict[str, Any]:
    """`--budget KEY=VALUE` items -> {key: value}; raises SettingsError naming a bad item."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise FlagError(f"--budget expects KEY=VALUE, got {item!r}")
        out[normalize_budget_key(key)] = value.strip()
    return out


def _validate_budgets(raw: Any, source: str) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SettingsError(f"{source}budgets must be a mapping of budget names to numbers")
    budgets: dict[str, float] = {}
    for key, value in raw.items():
        name = normalize_budget_key(str(key))
        if name not in BUDGET_KEYS:
            raise SettingsError(
                f"unknown budget '{key}' in {source}budgets (known: {', '.join(BUDGET_KEYS)})"
            )
        budgets[name] = _as_number(f"budget {name}", value, positive=False)
    return budgets


def _validate_budget_flags(raw: dict[str, Any]) -> dict[str, float]:
    """`--budget KEY=VALUE` values: errors name the flag, since no config file is to blame."""
    budgets: dict[str, float] = {}
    for key, value in raw.items():
        name = normalize_budget_key(str(key))
        if name not in BUDGET_KEYS:
            raise FlagError(f"--budget: unknown budget '{key}' (known: {', '.join(BUDGET_KEYS)})")
        try:
            budgets[name] = _as_number(f"--budget {name}", value, positive=False)
        except SettingsError as exc:
            raise FlagError(str(exc)) from None
    return budgets


def resolve_settings(section: dict[str, Any], overrides: dict[str, Any], source: str = "verify.") -> Settings:
    """Merge the config section with CLI overrides (None = not given) and validate everything."""
    if not isinstance(section, dict):
        raise SettingsError("the verify section must be a mapping")
    unknown = [key for key in section if key not in VERIFY_KEYS]
    if unknown:
        raise SettingsError(
            f"unknown key '{unknown[0]}' in the verify section (known: {', '.join(VERIFY_KEYS)})"
        )
    merged: dict[str, Any] = dict(DEFAULTS)
    merged.update({k: v for k, v in section.items() if k != "budgets"})
    budgets = _validate_budgets(section.get("budgets"), source)
    flagged: set[str] = set()  # keys whose value came from a command-line flag
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "budgets":
            budgets.update(_validate_budget_flags(value))
        else:
            merged[key] = value
            flagged.add(key)

    def name(key: str) -> str:
        return f"--{key.replace('_', '-')}" if key in flagged else f"verify.{key}"

    def bad(key: str, message: str) -> SettingsError:
        """A flag's bad value blames the flag (FlagError), a config value the config key."""
        return (FlagError if key in flagged else SettingsError)(message)

    entry, run = _entry_or_run(section, overrides)
    if isinstance(entry, str) and not entry.strip():
        if "entry" in flagged:
            raise FlagError("--entry is empty: pass --entry module:function")
        entry = None
    if entry is None and run is None:
        raise SettingsError(
            "no verify entry: set `verify: {entry: module:function}` or `verify: {run: \"python train.py\"}` in "
            "stabfix.yaml (or [tool.stabfix.verify] in pyproject.toml), or pass --entry module:function or "
            "`-- python train.py ...`"
        )
    if run is None:
        module, _, func = entry.strip().rpartition(":") if isinstance(entry, str) else ("", "", "")
        if not module or not func.isidentifier():
            raise bad("entry", f"{name('entry')} must look like 'module:function', got {entry!r}")
        entry = entry.strip()

    values: dict[str, int] = {}
    for key, minimum in (("steps", 1), ("warmup", 0), ("seed", 0)):
        try:
            values[key] = _as_int(name(key), merged[key], minimum)
        except SettingsError as exc:
            raise bad(key, str(exc)) from None
    steps, warmup, seed = values["steps"], values["warmup"], values["seed"]
    if warmup >= steps:
        blame = "warmup" if "warmup" in flagged else "steps"
        raise bad(blame, f"{name('warmup')} ({warmup}) must be smaller than {name('steps')} ({steps})")
    device = merged["device"]
    if not isinstance(device, str) or not (
        device in ("auto", "cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit())
    ):
        raise bad("device", f"{name('device')} must be auto, cpu, cuda or cuda:N, got {device!r}")
    try:
        timeout = _as_number(name("timeout"), merged["timeout"], positive=True)
    except SettingsError as exc:
        raise bad("timeout", str(exc)) from None
    exact_steps = merged["exact_steps"]
    if exact_steps not in EXACT_STEPS:
        raise bad("exact_steps", f"{name('exact_steps')} must be auto or all, got {exact_steps!r}")
    nproc = merged.get("nproc_per_node")
    if nproc is not None:
        try:
            nproc = _as_int(name("nproc_per_node"), nproc, 1)
        except SettingsError as exc:
            raise bad("nproc_per_node", str(exc)) from None
        if run is None:
            raise bad("nproc_per_node", f"{name('nproc_per_node')} launches a training command through torchrun: "
                      "give it with verify.run or `-- python train.py ...`, not an entry")
    return Settings(
        entry=entry,
        run=run,
        steps=steps,
        warmup=warmup,
        seed=seed,
        device=device,
        timeout=timeout,
        budgets=budgets,
        exact_steps=exact_steps,
        nproc_per_node=nproc,
    )


def _entry_or_run(section: dict[str, Any], overrides: dict[str, Any]) -> tuple[Any, list[str] | None]:
    """The entry or the command: a flag (`--entry`, `-- CMD`) replaces the config's choice, whichever
    it was; the same level giving both is an error."""
    flag_entry, flag_run = overrides.get("entry"), overrides.get("run")
    if flag_entry is not None and flag_run is not None:
        raise FlagError("give either --entry or a command after --, not both")
    if flag_entry is not None:
        return flag_entry, None
    if flag_run is not None:
        return None, _as_command("the command after --", flag_run)
    entry, run = section.get("entry"), section.get("run")
    if entry is not None and run is not None:
        raise SettingsError("verify.entry and verify.run are both set: keep one (entry: a build_verify "
                            "function; run: the training command)")
    return entry, (_as_command("verify.run", run) if run is not None else None)


def _as_command(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise SettingsError(f"{key}: cannot split {value!r} into words: {exc}") from None
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        argv = list(value)
    else:
        raise SettingsError(f"{key} must be a command line (a string or a list of strings), got {value!r}")
    if not argv or not argv[0].strip():
        raise SettingsError(f"{key} is empty")
    return argv


# -- `verify: estimate:` (stabfix verify --estimate) ------------------------------------------------
ESTIMATE_KEYS = ("entry", "device_memory_gb", "gpu", "variants", "kernels", "margin_gb")
GIB = 1024**3


@dataclass
class EstimateSettings:
    entry: str | None = None           # None: the verify entry
    device_memory_bytes: int | None = None
    gpu: str | None = None             # the catalog's display name when --gpu / estimate.gpu named one
    variants: str = "auto"             # auto (when it does not fit), always, never
    kernels: str = "cuda"              # cuda: model CUDA's optimizer/attention kernels; cpu: run as the CPU does
    margin_bytes: int | None = None    # None: the stated default margin

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve_estimate(section: Any, overrides: dict[str, Any]) -> EstimateSettings:
    """verify.estimate merged with the --estimate-entry / --device-memory-gb / --gpu flags (None = not given)."""
    from stabfix.verify.gpus import lookup, names

    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise SettingsError("verify.estimate must be a mapping")
    unknown = [key for key in section if key not in ESTIMATE_KEYS]
    if unknown:
        raise SettingsError(f"unknown key '{unknown[0]}' in verify.estimate (known: {', '.join(ESTIMATE_KEYS)})")
    merged = dict(section)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    out = EstimateSettings()
    entry = merged.get("entry")
    if entry is not None:
        if not isinstance(entry, str) or ":" not in entry or not entry.strip().rpartition(":")[2].isidentifier():
            raise SettingsError(f"verify.estimate.entry must look like 'module:function', got {entry!r}")
        out.entry = entry.strip()
    # the config's gpu / device_memory_gb first, then the flags' (device_memory_gb wins within each)
    flags = {k: v for k, v in overrides.items() if v is not None}
    layers = ((section, SettingsError, "verify.estimate.gpu", "verify.estimate.device_memory_gb"),
              (flags, FlagError, "--gpu", "--device-memory-gb"))
    for layer, error, gpu_key, memory_key in layers:
        if layer.get("gpu") is not None:
            found = lookup(str(layer["gpu"]))
            if found is None:
                raise error(f"{gpu_key}: unknown GPU {layer['gpu']!r} (known: {', '.join(names())})")
            out.gpu, out.device_memory_bytes = found[1], found[2]
        if layer.get("device_memory_gb") is not None:
            try:
                gb = _as_number(memory_key, layer["device_memory_gb"], positive=True)
            except SettingsError as exc:
                raise error(str(exc)) from None
            out.device_memory_bytes = int(gb * GIB)
            if layer.get("gpu") is None:
                out.gpu = None
    if merged.get("margin_gb") is not None:
        out.margin_bytes = int(_as_number("verify.estimate.margin_gb", merged["margin_gb"], positive=False) * GIB)
    variants = merged.get("variants", "auto")
    if isinstance(variants, bool):
        variants = "always" if variants else "never"
    if variants not in ("auto", "always", "never"):
        raise SettingsError(f"verify.estimate.variants must be auto, always or never, got {variants!r}")
    out.variants = variants
    kernels = merged.get("kernels", "cuda")
    if kernels not in ("cuda", "cpu"):
        raise SettingsError(f"verify.estimate.kernels must be cuda or cpu, got {kernels!r}")
    out.kernels = kernels
    return out
