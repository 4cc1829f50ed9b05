"""Gradient and numerics probes (child process only; imports torch).

- Every `optimizer.step()` (global step pre/post hooks, so optimizers built inside the step are seen
  too) marks the optimizer phase and, right before the update, takes per-parameter gradient norms
  with one `_foreach_norm` per (device, dtype) group; nothing is read back yet.
- A forward hook on every submodule records `aminmax` of each floating output (NaN propagates to
  both, +-inf shows in max/min), in execution order, until the first non-finite one is found.
- `end_step` moves all of it (loss, norms, minima/maxima) to the host in one transfer per device.

Deferred module checks (`begin_step(defer_checks=True)`; verify uses them on the CPU's sampled steps
after the first step, see `Instrumentation.run_step`): the hook only keeps the outputs, in order;
`end_step` reads the loss and gradient norms first and runs the `aminmax` checks on the kept outputs
only when one of them is non-finite, so a healthy step pays no check at all. They are read at
the end of the step, so an output that a later op changed in place is judged by its final values
(NaN and +-inf survive the usual in-place ops, ReLU and the like, so the first culprit is still
found); they are kept until the step ends (on the CPU's sampled steps nothing measures memory
inside the step), up to MAX_HELD_BYTES a step; a module that outputs -inf on purpose is learnt on the
eagerly checked steps (the first one, the exact ones).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import torch

from stabfix.verify.tracker import untracked

TOP_K = 5
MAX_NAMES = 20
# Deferred checks keep at most this much output alive in a step; past it, the kept outputs are checked
# and the rest of the step is checked as it comes (reading each output costs a few % of a CPU step,
# keeping it costs nothing measurable under a steady allocator; this bounds the memory it can take).
MAX_HELD_BYTES = 256 * 1024 * 1024


def _what(lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return "NaN"
    if math.isinf(lo) and math.isinf(hi):
        return "+-Inf"
    return "-Inf" if math.isinf(lo) else "Inf"


def _tensors_of(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, torch.Tensor)]
    if isinstance(out, dict):
        return [o for o in out.values() if isinstance(o, torch.Tensor)]
    return []


def _to_host(pieces: list[torch.Tensor]) -> list[float]:
    """The values of these 0-d tensors as floats: one transfer per accelerator device."""
    values: list[float] = [0.0] * len(pieces)
    by_device: dict[Any, list[int]] = {}
    for i, t in enumerate(pieces):
        by_device.setdefault(t.device, []).append(i)
    with untracked():
        for device, idx in by_device.items():
            if device.type == "cpu":  # no transfer to batch: reading each is cheaper than stacking them
                for i in idx:
                    values[i] = pieces[i].item()
                continue
            got = torch.stack([pieces[i] for i in idx]).double().tolist()
            for i, v in zip(idx, got):
                values[i] = v
    return values


def _kinds(b: tuple[float, float] | None) -> set[str]:
    """The non-finite values an (aminmax) pair shows: NaN (it hides any infinity), -inf, +inf."""
    if b is None:
        return set()
    lo, hi = b
    if math.isnan(lo) or math.isnan(hi):
        return {"nan"}
    return {k for k, v in (("-inf", lo), ("+inf", hi)) if math.isinf(v)}


def _inputs_kinds(bounds: list[tuple[float, float] | None], deps: tuple[int, ...]) -> set[str]:
    return set().union(*(_kinds(bounds[d]) for d in deps))


def _first_own_nonfinite(entries: list[Any], bounds: list[tuple[float, float] | None]) -> int | None:
    """The first module output (execution order) with a non-finite value of a kind none of the
    module's inputs had: the module whose own computation made it (a Dropout handed a NaN did not; a
    softmax that turns an all -inf masked row into NaN did). When every non-finite output came in with
    an input (NaN in the data), the first non-finite output."""
    first = None
    for i, ((_, kind, _, _, deps), b) in enumerate(zip(entries, bounds)):
        out = _kinds(b)
        if kind is None or not out:
            continue
        if out - _inputs_kinds(bounds, deps):
            return i
        if first is None:
            first = i
    return first


def _closure_of(args: Any, kwargs: Any) -> Any:
    """The closure handed to `optimizer.step` (args[0] is the optimizer itself), or None."""
    closure = kwargs.get("closure") if kwargs else None
    if closure is None and len(args) > 1:
        closure = args[1]
    return closure if callable(closure) else None


def _with_closure(args: Any, kwargs: Any, closure: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if kwargs and "closure" in kwargs:
        return tuple(args), {**kwargs, "closure": closure}
    return (args[0], closure, *args[2:]), dict(kwargs or {})


class Probes:
    def __init__(self, models: list[tuple[str, torch.nn.Module]], tracker: Any) -> None:
        self.tracker = tracker
        self.models = list(models)
        self.param_names: dict[int, str] = {}
        for prefix, model in models:
            for name, p in model.named_parameters(remove_duplicate=True):
                self.param_names.setdefault(id(p), prefix + name)
        self.handles: list[Any] = []
        # weakly: an optimizer the user's code drops (one built per fit or per step) must die with its
        # state, or verify itself would be the leak it reports ("held by Adam.state")
        self.optimizers_seen: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.optimizers_stepped: list[str] = []  # the type of every optimizer that stepped, in order
        self.optimized_params: dict[int, int] = {}  # id -> numel of every parameter an optimizer stepped
        self.grad_outside_optimizers: set[int] = set()  # trainable, in no optimizer, had a gradient
        self._outside: list[torch.Tensor] | None = None  # those not seen with a gradient yet
        self._outside_for: tuple[int, int] = (-1, -1)
        self.first_nonfinite: dict[str, Any] | None = None
        self._checking_modules = True
        self.benign: dict[str, dict[str, Any]] = {}  # non-finite outputs while loss and grads were finite
        self._skip: set[str] = set()
        self._hooked: set[int] = set()
        self.begin_step()

    # -- install / remove ----------------------------------------------------------------------
    def install(self) -> None:
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        self.handles.append(register_optimizer_step_pre_hook(self._pre_step))
        self.handles.append(register_optimizer_step_post_hook(self._post_step))
        given, self.models = self.models, []
        self.hook_modules(given)

    def hook_modules(self, models: list[tuple[str, torch.nn.Module]]) -> None:
        """Forward hooks on every submodule of the models (those given at construction, and these
        ones, found later: `verify -- COMMAND` learns the models at the first optimizer step)."""
        for prefix, model in models:
            self.models.append((prefix, model))
            for name, p in model.named_parameters(remove_duplicate=True):
                self.param_names.setdefault(id(p), prefix + name)
        seen = self._hooked
        for prefix, model in models:
            for name, module in model.named_modules():
                if id(module) in seen:
                    continue
                seen.add(id(module))
                qualified = (prefix + name) if name else (prefix.rstrip(".") or type(module).__name__)
                self.handles.append(module.register_forward_hook(self._make_hook(qualified, module)))
        self._module_hook_count = len(self.handles) - 2

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def _remove_module_hooks(self) -> None:
        for handle in self.handles[2:]:
            handle.remove()
        del self.handles[2:]

    # -- per-step state ------------------------------------------------------------------------
    def begin_step(self, defer_checks: bool = False) -> None:
        # (gradient evaluation, params, norms): one evaluation per optimizer step or closure call
        self._norm_groups: list[tuple[int, list[Any], list[torch.Tensor]]] = []
        self._evaluations = 0
        self._none_grad: list[int] = []
        # module outputs in execution order: (name, kind, min, max, inputs) once checked, (name, kind,
        # output, None, inputs) while kept for a deferred check; `inputs` are the indices of the entries
        # of the module's tensor inputs. An input no module output (a tensor made by code outside the
        # modules: the data, a parent's own ops) gets an entry of its own, kind None, inputs ().
        self._fwd: list[tuple[str, str | None, Any, Any, tuple[int, ...]]] = []
        self._entry_of: dict[int, tuple[Any, int]] = {}  # id(tensor) -> (weak ref, index in _fwd)
        self._held_bytes = 0
        self._defer = defer_checks
        self.optimizer_steps = 0

    def drop_held(self) -> None:
        """Let go of the outputs kept for deferred checks (the step failed, or ended healthy)."""
        self._fwd = [e if e[3] is not None else (e[0], e[1], None, None, e[4]) for e in self._fwd]
        self._held_bytes = 0

    def name_of(self, p: torch.Tensor) -> str:
        name = self.param_names.get(id(p))
        if name is None:
            name = f"<unnamed {tuple(p.shape)} parameter>"
            self.param_names[id(p)] = name
        return name

    # -- hooks ---------------------------------------------------------------------------------
    def _pre_step(self, optimizer: Any, args: Any, kwargs: Any) -> Any:
        self.tracker.enter_optimizer()
        self.optimizer_steps += 1
        if self.optimizers_seen.get(id(optimizer)) is not optimizer:
            self.optimizers_seen[id(optimizer)] = optimizer
            self.optimizers_stepped.append(type(optimizer).__name__)
        closure = _closure_of(args, kwargs)
        if closure is None:
            self._read_grads(optimizer)
            return None
        # `optimizer.step(closure)` (LBFGS, Lightning): the gradients do not exist yet; the closure
        # computes them, possibly several times (LBFGS). Read them after every evaluation, and count the
        # closure's forward and backward as the user's phases, not the optimizer's.
        return _with_closure(args, kwargs, self._measured_closure(optimizer, closure))

    def _measured_closure(self, optimizer: Any, closure: Any) -> Any:
        def measured() -> Any:
            self.tracker.exit_optimizer()
            try:
                return closure()
            finally:
                self.tracker.enter_optimizer()
                self._read_grads(optimizer)

        return measured

    def _read_grads(self, optimizer: Any) -> None:
        """Per-parameter gradient norms of one gradient evaluation (an optimizer step, or one closure
        call inside it); every evaluation of the step is kept and checked, not only the last."""
        evaluation = self._evaluations
        self._evaluations += 1
        optimized = self.optimized_params
        groups: dict[tuple[Any, Any], tuple[list[torch.Tensor], list[torch.Tensor]]] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                optimized[id(p)] = p.numel()
                grad = p.grad
                if grad is None:
                    if p.requires_grad:
                        self._none_grad.append(p)
                    continue
                if grad.is_sparse:
                    grad = grad.coalesce()._values()
                key = (grad.device, grad.dtype)
                entry = groups.get(key)
                if entry is None:
                    entry = groups[key] = ([], [])
                entry[0].append(p)
                entry[1].append(grad)
        with untracked():
            for params, grads in groups.values():
                try:
                    norms = list(torch._foreach_norm(grads))
                except (RuntimeError, NotImplementedError):
                    norms = [torch.linalg.vector_norm(g.detach().float()) for g in grads]
                self._norm_groups.append((evaluation, params, norms))

    def note_grads_outside_optimizers(self, returned_optimizers: list[Any]) -> None:
        """At a step's end: which trainable parameters in no optimizer have a gradient (a target network
        has none; a head left out of the optimizer has one). Only those not seen with one yet are looked
        at, and the list is rebuilt only when an optimizer stepped a parameter it had not stepped before."""
        known = (len(self.optimized_params), len(self.models))
        if not known[0] and not returned_optimizers:
            return  # no optimizer at all: nothing is "in no optimizer"
        if self._outside is None or self._outside_for != known:
            in_opt = set(self.optimized_params)
            for opt in returned_optimizers:
                in_opt.update(id(p) for group in opt.param_groups for p in group["params"])
            self._outside = [p for _, model in self.models for p in model.parameters()
                             if p.requires_grad and id(p) not in in_opt and id(p) not in self.grad_outside_optimizers]
            self._outside_for = known
        if not self._outside:
            return
        got = [p for p in self._outside if p.grad is not None]
        if got:
            self.grad_outside_optimizers.update(id(p) for p in got)
            self._outside = [p for p in self._outside if p.grad is None]

    def _post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.tracker.exit_optimizer()

    def _make_hook(self, name: str, module: torch.nn.Module) -> Any:
        kind = type(module).__name__

        def hook(mod: Any, inputs: Any, output: Any) -> None:
            if not self._checking_modules or name in self._skip:
                return
            outs = [t for t in _tensors_of(output) if t.is_floating_point() and t.numel()]
            if not outs:
                return
            # the module's own computation is what turns finite inputs into a non-finite output, so the
            # inputs are checked too; one that is an earlier module's output was checked already
            own = {id(t) for t in outs}  # an in-place module's input is its output: not an input here
            deps = tuple(self._checked(t, name, None, ()) for t in _tensors_of(inputs)
                         if t.is_floating_point() and t.numel() and id(t) not in own)
            for t in outs:
                self._checked(t, name, kind, deps)

        return hook

    def _checked(self, t: torch.Tensor, name: str, kind: str | None, deps: tuple[int, ...]) -> int:
        """The index of t's check in this step (made now unless t was checked already: a child's output
        that its parent returns, or an output that is the next module's input)."""
        known = self._entry_of.get(id(t))
        if known is not None and known[0]() is t:
            return known[1]
        index = len(self._fwd)
        # a weak reference: holding the tensor itself would add it to backward's live bytes
        self._entry_of[id(t)] = (weakref.ref(t), index)
        if self._defer:
            self._fwd.append((name, kind, t, None, deps))
            self._held_bytes += t.numel() * t.element_size()
            if self._held_bytes > MAX_HELD_BYTES:
                self._check_held()
            return index
        with untracked():
            lo, hi = torch.aminmax(t.detach())
        self._fwd.append((name, kind, lo, hi, deps))
        return index

    def _check_held(self) -> None:
        """Check the kept outputs now, and every output of the rest of the step as it comes."""
        with untracked():
            for i, (name, kind, t, hi, deps) in enumerate(self._fwd):
                if hi is None and t is not None:
                    self._fwd[i] = (name, kind, *torch.aminmax(t.detach()), deps)
        self._held_bytes = 0
        self._defer = False

    def _note_benign(self, found: dict[str, Any], outputs: list[tuple[str, str, float, float]]) -> None:
        for j, (name, kind, lo, hi) in enumerate(outputs):
            if not (math.isfinite(lo) and math.isfinite(hi)) and name not in self.benign:
                self.benign[name] = {**{k: v for k, v in found.items() if k != "input_nonfinite"},
                                     "module": name, "type": kind, "value": _what(lo, hi), "index": j}
                self._skip.add(name)

    def _grad_summary(self, params: list[Any], norms: list[float], evaluations: list[int]) -> dict[str, Any]:
        """The step's gradient numbers over all its gradient evaluations: `grad_norm` the largest
        global norm (NaN / Inf when any evaluation had one), `grad_norms` each evaluation's, the top
        parameters of the largest, and every parameter that was non-finite in any of them."""
        by_eval: dict[int, list[tuple[Any, float]]] = {}
        for p, n, e in zip(params, norms, evaluations):
            by_eval.setdefault(e, []).append((p, n))
        per_eval: list[float] = []
        nonfinite: dict[str, None] = {}
        best: tuple[float, list[tuple[float, str]]] | None = None
        for e in sorted(by_eval):
            total_sq = 0.0
            any_nan = any_inf = False
            ranked: list[tuple[float, str]] = []
            for p, n in by_eval[e]:
                name = self.name_of(p)
                if math.isfinite(n):
                    total_sq += n * n
                    ranked.append((n, name))
                else:
                    any_nan = any_nan or math.isnan(n)
                    any_inf = any_inf or not math.isnan(n)
                    nonfinite[name] = None
            norm = math.nan if any_nan else math.inf if any_inf else math.sqrt(total_sq)
            per_eval.append(norm)
            if best is None or (math.isfinite(norm) and (not math.isfinite(best[0]) or norm > best[0])):
                best = (norm, ranked)
        ranked = sorted(best[1], key=lambda item: -item[0]) if best else []
        if any(math.isnan(n) for n in per_eval):
            grad_norm = math.nan
        elif any(math.isinf(n) for n in per_eval):
            grad_norm = math.inf
        else:
            grad_norm = max(per_eval)
        names = list(nonfinite)
        return {
            "grad_norm": grad_norm,
            "grad_norms": per_eval,
            "top_params": [[name, n] for n, name in ranked[:TOP_K]],
            "nonfinite_grads": names[:MAX_NAMES],
            "nonfinite_grads_count": len(names),
            "params_with_grad": len({id(p) for p in params}),
        }

    # -- readback ------------------------------------------------------------------------------
    def end_step(self, step: int, loss: Any) -> dict[str, Any]:
        """One host transfer per device: loss, grad norms, module minima/maxima."""
        pieces: list[torch.Tensor] = []
        loss_kind = None
        loss_value: float | None = None
        if isinstance(loss, torch.Tensor):
            loss_kind = "tensor"
            with untracked():
                lt = loss.detach()
                if lt.numel() != 1:
                    lt = lt.float().mean() if lt.numel() else lt.new_tensor(float("nan"))
                pieces.append(lt.reshape(()))
        elif isinstance(loss, (int, float)) and not isinstance(loss, bool):
            loss_kind = "float"
            loss_value = float(loss)
        norms_flat = [n for _, _, norms in self._norm_groups for n in norms]
        params_flat = [p for _, params, _ in self._norm_groups for p in params]
        evals_flat = [e for e, params, _ in self._norm_groups for _ in params]
        pieces.extend(norms_flat)
        checked = [(lo, hi) for _, _, lo, hi, _ in self._fwd if hi is not None]
        for lo, hi in checked:
            pieces.append(lo)
            pieces.append(hi)

        values = _to_host(pieces)
        pos = 0
        if loss_kind == "tensor":
            loss_value = values[0]
            pos = 1

        result: dict[str, Any] = {"loss": loss_value, "loss_kind": loss_kind}
        # gradients ------------------------------------------------------------------------
        if params_flat:
            norms = values[pos : pos + len(params_flat)]
            pos += len(params_flat)
            result.update(self._grad_summary(params_flat, norms, evals_flat))
        else:
            result.update(grad_norm=None, grad_norms=[], top_params=[], nonfinite_grads=[], nonfinite_grads_count=0,
                          params_with_grad=0)
        none_names = list(dict.fromkeys(self.name_of(p) for p in self._none_grad))
        result["none_grads"] = none_names[:MAX_NAMES]
        result["none_grads_count"] = len(none_names)
        result["optimizer_steps"] = self.optimizer_steps
        # numerics ----------------------------------------------------------------------------
        result["nonfinite_module"] = None
        loss_bad = loss_value is not None and not math.isfinite(loss_value)
        grads_bad = bool(result["nonfinite_grads_count"]) or (
            result["grad_norm"] is not None and not math.isfinite(result["grad_norm"]))
        kept = [t for _, _, t, hi, _ in self._fwd if hi is None and t is not None]
        kept_values = None
        if kept and (loss_bad or grads_bad):  # deferred checks: only a failing step needs them
            with untracked():
                kept_values = _to_host([m for t in kept for m in torch.aminmax(t.detach())])
        del kept
        # (min, max) of every entry in execution order; None for those kept for a check that turned
        # out not to be needed
        bounds: list[tuple[float, float] | None] = []
        n_checked = n_kept = 0
        for _, _, t, hi, _ in self._fwd:
            if hi is not None:
                at = pos + 2 * n_checked
                bounds.append((values[at], values[at + 1]))
                n_checked += 1
            elif t is not None and kept_values is not None:
                bounds.append((kept_values[2 * n_kept], kept_values[2 * n_kept + 1]))
                n_kept += 1
            else:
                bounds.append(None)
        entries = self._fwd
        self.drop_held()
        outputs = [(name, kind, *b) for (name, kind, _, _, _), b in zip(entries, bounds)
                   if kind is not None and b is not None]
        culprit = _first_own_nonfinite(entries, bounds)
        if culprit is not None:
            name, kind, _, _, deps = entries[culprit]
            lo, hi = bounds[culprit]  # type: ignore[misc]
            found = {"module": name, "type": kind, "step": step, "value": _what(lo, hi),
                     "index": sum(1 for e, b in zip(entries[:culprit], bounds) if e[1] is not None and b is not None),
                     "modules_checked": len(outputs),
                     # no module made it: it came in with the input (the data, or the step's own code
                     # outside every module)
                     "input_nonfinite": not (_kinds(bounds[culprit]) - _inputs_kinds(bounds, deps))}
            if loss_bad or grads_bad:
                # A real numerical failure: the module whose own computation made the first non-finite value.
                result["nonfinite_module"] = found
                if self.first_nonfinite is None:
                    self.first_nonfinite = found
                    self._checking_modules = False  # found: stop paying for the checks
                    self._remove_module_hooks()
            else:
                # Loss and gradients stayed finite: a deliberate -inf (attention masks) and the like.
                # Remember it, and stop checking the modules that do it.
                self._note_benign(found, outputs)
        result["modules_checked"] = len(outputs)
        self._norm_groups = []
        self._evaluations = 0
        self._none_grad = []
        self._fwd = []
        self._entry_of = {}
        return result
