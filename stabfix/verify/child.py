"""The child process of `stabfix verify`: imports the user's entry, runs the instrumented steps and
streams one JSON object per line to the parent over a dedicated pipe (the user's own stdout/stderr
go to a file the parent reads only when something went wrong).

Events: start, ready, step (one per step), done, error (the user's code failed; carries the user's
traceback with stabfix frames removed), internal (stabfix itself failed).
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import importlib.util
import json
import os
import random
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

FAULT_SIGNAL = getattr(signal, "SIGUSR1", None)


class UserCodeError(Exception):
    """The user's code failed (import, entry, step); carries the phase and a formatted traceback."""

    def __init__(self, phase: str, message: str, tb: str | None = None, step: int | None = None,
                 kind: str = "exception") -> None:
        super().__init__(message)
        self.phase = phase
        self.message = message
        self.tb = tb
        self.step = step
        self.kind = kind


class _Channel:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, event: dict[str, Any]) -> None:
        data = (json.dumps(event, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]


def _user_traceback(exc: BaseException) -> str:
    """The traceback as Python prints it, from the user's first frame (stabfix.verify.tracebacks)."""
    from stabfix.verify.tracebacks import user_traceback

    return user_traceback(exc)


def _exc_message(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)  # all devices
    if importlib.util.find_spec("numpy") is not None:
        try:
            import numpy

            numpy.random.seed(seed)
        except Exception:  # noqa: BLE001 - a broken numpy must not stop the run
            pass


def _check_entry_module(entry: str, project: Path) -> None:
    module_name = entry.rpartition(":")[0]
    if module_name.endswith(".py"):
        if not (project / module_name).is_file():
            raise UserCodeError("import", f"entry file {module_name} not found in {project}", kind="not_found")
        return
    top = module_name.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = True  # let the real import report it
    if not found:
        raise UserCodeError(
            "import",
            f"entry module '{module_name}' not found (looked in {project} and the installed packages)",
            kind="not_found",
        )


def _load_entry(entry: str, project: Path) -> Any:
    module_name, _, func_name = entry.rpartition(":")
    try:
        if module_name.endswith(".py"):
            file = (project / module_name).resolve()
            if not file.is_file():
                raise UserCodeError("import", f"entry file {module_name} not found in {project}", kind="not_found")
            spec = importlib.util.spec_from_file_location(file.stem, file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[file.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except UserCodeError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UserCodeError(
                "import",
                f"entry module '{module_name}' not found (looked in {project} and the installed packages)",
                kind="not_found",
            ) from None
        raise UserCodeError("import", f"importing '{module_name}' failed: {_exc_message(exc)}",
                            _user_traceback(exc)) from None
    except BaseException as exc:  # noqa: BLE001 - anything the user's module does at import
        raise UserCodeError("import", f"importing '{module_name}' failed: {_exc_message(exc)}",
                            _user_traceback(exc)) from None
    func = getattr(module, func_name, None)
    if func is None:
        raise UserCodeError("import", f"module '{module_name}' has no function '{func_name}'", kind="not_found")
    if not callable(func):
        raise UserCodeError("import", f"'{entry}' is not callable (it is a {type(func).__name__})", kind="not_found")
    return func


def _models_list(models: Any) -> list[tuple[str, Any]]:
    import torch

    if isinstance(models, torch.nn.Module):
        return [("", models)]
    if isinstance(models, dict) and all(isinstance(m, torch.nn.Module) for m in models.values()):
        return [(f"{k}.", m) for k, m in models.items()]
    if isinstance(models, (list, tuple)) and all(isinstance(m, torch.nn.Module) for m in models):
        if len(models) == 1:
            return [("", models[0])]
        names = [type(m).__name__ for m in models]
        unique = len(set(names)) == len(names)
        return [((names[i] if unique else f"models[{i}]") + ".", m) for i, m in enumerate(models)]
    raise UserCodeError(
        "entry",
        "the entry must return models as an nn.Module or a list/tuple/dict of them, "
        f"got {type(models).__name__}",
        kind="bad_return",
    )


def _optimizers_list(optimizers: Any) -> list[Any]:
    import torch

    if optimizers is None:
        return []
    if isinstance(optimizers, torch.optim.Optimizer):
        return [optimizers]
    if isinstance(optimizers, dict):
        optimizers = list(optimizers.values())
    if isinstance(optimizers, (list, tuple)) and all(isinstance(o, torch.optim.Optimizer) for o in optimizers):
        return list(optimizers)
    raise UserCodeError(
        "entry",
        f"the entry must return optimizers as a torch.optim.Optimizer or a list/tuple of them, "
        f"got {type(optimizers).__name__}",
        kind="bad_return",
    )


def _unpack(result: Any) -> tuple[Any, Any, Any]:
    if isinstance(result, tuple) and len(result) == 3:
        models, optimizers, step = result
    elif isinstance(result, tuple) and len(result) == 2:
        models, step = result
        optimizers = None
    else:
        got = f"a tuple of {len(result)}" if isinstance(result, tuple) else type(result).__name__
        raise UserCodeError(
            "entry", f"the entry must return (models, optimizers, step) or (models, step), got {got}",
            kind="bad_return",
        )
    if not callable(step):
        raise UserCodeError("entry", f"step must be a zero-argument callable, got {type(step).__name__}",
                            kind="bad_return")
    return models, optimizers, step


def unique_parameters(models: list[tuple[str, Any]]) -> dict[int, Any]:
    """Every parameter of the models once, by identity (shared and tied ones counted once)."""
    seen: dict[int, Any] = {}
    for _, model in models:
        for p in model.parameters():
            seen.setdefault(id(p), p)
    return seen


def _param_counts(models: list[tuple[str, Any]], optimizers: list[Any], optimized: dict[int, int],
                  grad_outside: set[int]) -> dict[str, Any]:
    """Parameter counts; `optimized` (id -> numel) are the parameters an optimizer stepped (the
    returned optimizers' are added here), `grad_outside` the trainable parameters in no optimizer that
    had a gradient at a step's end."""
    seen = unique_parameters(models)
    total = sum(p.numel() for p in seen.values())
    trainable = sum(p.numel() for p in seen.values() if p.requires_grad)
    in_opt = dict(optimized)
    for opt in optimizers:
        for group in opt.param_groups:
            for p in group["params"]:
                in_opt[id(p)] = p.numel()
    outside = {i for i, p in seen.items() if p.requires_grad and i not in in_opt} if in_opt else set()
    with_grad = outside & grad_outside
    without_grad = outside - grad_outside
    return {
        "total": total,
        "trainable": trainable,
        "frozen": total - trainable,
        "trainable_not_in_optimizer": sum(seen[i].numel() for i in outside),
        "optimizer_params_outside_models": sum(n for i, n in in_opt.items() if i not in seen),
        # of those in no optimizer: the ones that get gradients (never updated: a forgotten head) and
        # the ones that never do (a target network, an EMA copy: frozen in effect), by module
        "not_in_optimizer_with_grad": sum(seen[i].numel() for i in with_grad),
        "not_in_optimizer_without_grad": sum(seen[i].numel() for i in without_grad),
        "not_in_optimizer_modules": {"with_grad": covering_names(models, with_grad),
                                     "without_grad": covering_names(models, without_grad)},
    }


def covering_names(models: list[tuple[str, Any]], wanted: set[int]) -> list[str]:
    """The fewest names that cover exactly these parameters: the outermost modules all of whose
    parameters are wanted, then the wanted parameters of partly covered modules by their own name."""
    if not wanted:
        return []
    names: list[str] = []
    covered: set[int] = set()
    for prefix, model in models:
        chosen: list[str] = []
        for name, module in model.named_modules():
            if any(c == "" or name.startswith(c + ".") for c in chosen):
                continue  # inside a module already named
            ids = {id(p) for p in module.parameters()}
            if ids and ids <= wanted:
                chosen.append(name)
                covered |= ids
                names.append((prefix + name) if name else (prefix.rstrip(".") or type(module).__name__))
        for name, p in model.named_parameters():
            if id(p) in wanted and id(p) not in covered:
                covered.add(id(p))
                names.append(prefix + name)
    return names


def run(settings: dict[str, Any], channel: _Channel) -> int:
    """The instrumented smoke-train. Raises UserCodeError for the user's failures."""
    t_start = time.perf_counter()
    project = Path(settings["project"])
    steps = int(settings["steps"])
    warmup = int(settings["warmup"])
    seed = int(settings["seed"])

    _check_entry_module(settings["entry"], project)  # fail fast, before the slow torch import

    import torch

    from stabfix.verify.instrument import BadLoss, Instrumentation, StepFailed, exact_schedule

    requested = settings["device"]
    if requested == "auto":
        device_str = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device_str = requested
    if device_str.startswith("cuda") and not torch.cuda.is_available():
        raise UserCodeError("setup", f"device '{requested}' requested but CUDA is not available", kind="setup")
    device = torch.device(device_str)
    use_cuda = device.type == "cuda"
    if use_cuda and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())

    channel.send({
        "type": "start",
        "pid": os.getpid(),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if use_cuda else "cpu",
        "threads": torch.get_num_threads(),
    })

    _seed_everything(seed)
    entry = _load_entry(settings["entry"], project)
    _seed_everything(seed)
    try:
        result = entry(device)
    except BaseException as exc:  # noqa: BLE001
        raise UserCodeError("entry", f"{settings['entry']}({device}) raised {_exc_message(exc)}",
                            _user_traceback(exc)) from None
    models_raw, optimizers_raw, step_fn = _unpack(result)
    del result
    models = _models_list(models_raw)
    optimizers = _optimizers_list(optimizers_raw)

    snapshot_path = settings.get("snapshot")
    recording = False
    if use_cuda and snapshot_path:
        torch.cuda.memory._record_memory_history(max_entries=200_000)
        recording = True

    inst = Instrumentation(models, device)
    tracker, probes = inst.tracker, inst.probes
    inst.install()
    from stabfix.verify.startup_holders import largest_holders

    channel.send({
        "type": "ready",
        "setup_s": time.perf_counter() - t_start,
        "live_before_bytes": tracker.live,
        "model_state_bytes": _model_state_bytes(models),
        "live_before_holders": largest_holders(tracker, models, tracker.live),
        "models": [{"name": (p.rstrip(".") or type(m).__name__), "type": type(m).__name__} for p, m in models],
        "optimizers": [type(o).__name__ for o in optimizers],
        "modules_hooked": probes._module_hook_count,
    })

    exact = exact_schedule(steps, warmup, str(settings.get("exact_steps") or "auto"))
    for i in range(1, steps + 1):
        try:
            # the first step checks module outputs as they come (and learns deliberate -inf masks);
            # the later sampled steps check them only when the loss or a gradient goes non-finite
            record = inst.run_step(i, step_fn, warmup=i <= warmup, exact=i in exact, defer_checks=i > 1)
        except StepFailed as failed:
            exc = failed.original
            oom = type(exc).__name__ == "OutOfMemoryError"
            err = UserCodeError("step", f"step {i} raised {_exc_message(exc)}", _user_traceback(exc), step=i,
                                kind="oom" if oom else "exception")
            if oom and use_cuda:
                err.extra = {"snapshot": _dump_snapshot(  # type: ignore[attr-defined]
                    torch, snapshot_path or str(project / "stabfix-oom-snapshot.pickle"))}
            raise err from None
        except BadLoss as bad:
            raise UserCodeError("step", str(bad), step=i, kind="bad_return") from None
        channel.send(record)
        probes.note_grads_outside_optimizers(optimizers)

    # survivors: storages created after warm-up (all steps but the last) and still alive at the end
    probes.remove()
    gc.collect()
    first = warmup + 1 if warmup + 1 < steps else 1
    survivor_out = _survivor_groups(tracker.survivors(first, steps), steps, project)

    snapshot_written = None
    if recording:
        snapshot_written = _dump_snapshot(torch, snapshot_path)
        torch.cuda.memory._record_memory_history(enabled=None)

    channel.send({
        "type": "done",
        "params": _param_counts(models, optimizers, probes.optimized_params, probes.grad_outside_optimizers),
        "optimizers_stepped": probes.optimizers_stepped,
        "first_nonfinite_module": probes.first_nonfinite,
        "benign_nonfinite_modules": list(probes.benign.values())[:10],
        "survivors": survivor_out,
        "survivor_window": [first, steps - 1],
        "live_after_gc_bytes": tracker.live,
        "snapshot": snapshot_written,
        "total_s": time.perf_counter() - t_start,
    })
    return 0


SAMPLED_PHASE = "sampled step"


def _survivor_groups(refs: list[Any], last: int, project: Path) -> list[dict[str, Any]]:
    """Survivors (storages created after warm-up, before the last step, still alive) grouped by the op
    and source line that created them, the largest first, with their holders.

    A storage created in a sampled step has no site; it is counted with the exact-step group whose
    storages have its size and the same holder (the last step is exact, so a storage it created and
    kept gives the site of the same storages that sampled steps kept, without being counted itself).
    The others are grouped by size under op "unknown", phase "sampled step"."""
    from stabfix.verify.holders import find_holders
    from stabfix.verify.tracker import PHASES, op_name

    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for ref in refs:
        step_of, phase, op, site = ref.info
        in_window = step_of < last
        if op == "sampled":
            if not in_window:
                continue
            key: tuple[Any, ...] = (SAMPLED_PHASE, ref.nbytes)
            site = None
            name, phase_name = "unknown", SAMPLED_PHASE
        else:
            name, phase_name = op_name(op), PHASES[phase]
            key = (name, site[0] if site else None, site[1] if site else None, phase_name)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "op": name, "file": _display_path(site[0], project) if site else None,
                "line": site[1] if site else None, "function": site[2] if site else None,
                "phase": phase_name, "count": 0, "bytes": 0, "steps": set(), "keys": set(),
                "sampled": 0, "sizes": set(), "probe": set(), "probe_bytes": 0,
            }
        g["sizes"].add(ref.nbytes)
        if not in_window:  # the last step's: a site for sampled storages, not a survivor
            g["probe"].add(ref.key)
            g["probe_bytes"] += ref.nbytes
            continue
        g["count"] += 1
        g["bytes"] += ref.nbytes
        g["steps"].add(step_of)
        g["keys"].add(ref.key)
        if op == "sampled":
            g["sampled"] += 1
    del refs
    sampled = [g for g in groups.values() if g["phase"] == SAMPLED_PHASE]
    exact = [g for g in groups.values() if g["phase"] != SAMPLED_PHASE]
    # the ten largest survivor groups, and the ten largest groups only the last step made (sites)
    exact = (sorted((g for g in exact if g["count"]), key=lambda g: -g["bytes"])[:10]
             + sorted((g for g in exact if not g["count"]), key=lambda g: -g["probe_bytes"])[:10])
    # who holds them: the groups created in 2+ steps (the accumulating ones, the ones reported), and,
    # when sampled steps left survivors, every group (the holder is what attributes those)
    candidates = exact + sampled
    wanted = {i: (g["keys"] | g["probe"]) if sampled else g["keys"] for i, g in enumerate(candidates)
              if len(g["steps"]) >= 2 or sampled}
    holders = find_holders(wanted, ignore={id(groups), id(candidates), id(exact), id(sampled)}) if wanted else {}
    for i, g in enumerate(candidates):
        h = holders.get(i, {})
        g["holders"], g["paths"], g["python_refs"] = h.get("holders", []), h.get("paths", []), h.get("python_refs", False)
    unmatched = []
    for sg in sampled:
        # the exact group's holders may include one more: the last step's storage, there the site's
        # probe, is often still in a variable (`loss`) when the run ends
        home = next((g for g in exact if g["holders"] and sg["holders"] and set(sg["holders"]) <= set(g["holders"])
                     and sg["sizes"] <= g["sizes"]), None)
        if home is None:
            unmatched.append(sg)
            continue
        for k in ("count", "bytes", "sampled"):
            home[k] += sg[k]
        home["holders"] = [h for h in home["holders"] if h in sg["holders"]]
        home["steps"] |= sg["steps"]
        if not home["keys"]:  # its paths so far are the last step's storages, not survivors
            home["paths"] = []
        home["paths"] = home["paths"] + [p for p in sg["paths"] if p not in home["paths"]]
    ranked = sorted((g for g in exact + unmatched if g["count"]), key=lambda g: -g["bytes"])[:10]
    return [{
        "op": g["op"], "file": g["file"], "line": g["line"], "function": g["function"], "phase": g["phase"],
        "count": g["count"], "bytes": g["bytes"], "steps": len(g["steps"]),
        "holders": g["holders"], "paths": g["paths"][:3], "python_refs": g["python_refs"],
        "sampled": g["sampled"],
    } for g in ranked]


def _model_state_bytes(models: list[tuple[str, Any]]) -> int:
    seen: dict[int, int] = {}
    for _, model in models:
        for t in list(model.parameters()) + list(model.buffers()):
            try:
                st = t.untyped_storage()
            except Exception:  # noqa: BLE001
                continue
            seen[id(st)] = st.nbytes()
    return sum(seen.values())


def _display_path(filename: str, project: Path) -> str:
    try:
        return str(Path(filename).resolve().relative_to(project.resolve()))
    except (ValueError, OSError):
        return filename


def _dump_snapshot(torch: Any, path: str | None) -> str | None:
    if not path:
        return None
    try:
        torch.cuda.memory._dump_snapshot(path)
        return path
    except Exception:  # noqa: BLE001 - a failed dump must not hide the real error
        return None


def main(argv: list[str]) -> int:
    return serve(argv, run)


def serve(argv: list[str], body: Callable[[dict[str, Any], _Channel], int]) -> int:
    """A child's life around `body` (verify's run, the estimate's run): settings from argv, the project on
    sys.path, the user's errors and stabfix's own failures sent as events, never as a traceback."""
    settings = json.loads(argv[0])
    channel = _Channel(int(settings["fd"]))
    project = str(Path(settings["project"]).resolve())
    if project not in sys.path:
        sys.path.insert(0, project)
    if FAULT_SIGNAL is not None:
        faulthandler.register(FAULT_SIGNAL, file=sys.stderr, all_threads=True)
    try:
        return body(settings, channel)
    except UserCodeError as exc:
        event = {"type": "error", "phase": exc.phase, "kind": exc.kind, "message": exc.message,
                 "traceback": exc.tb, "step": exc.step}
        event.update(getattr(exc, "extra", {}) or {})
        channel.send(event)
        return 3
    except BaseException as exc:  # noqa: BLE001 - stabfix's own failure: reported, never a traceback
        channel.send({"type": "internal", "message": _exc_message(exc),
                      "traceback": "".join(traceback.format_exception(exc))})
        return 4
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass


if __name__ == "__main__":  # pragma: no cover - started by the runner
    raise SystemExit(main(sys.argv[1:]))
