"""Cross-rank checks of a multi-process (torchrun) verify run, over the per-rank step records.

Pure Python (no torch). Each rank's step records carry a `sync` dict written by
`stabfix.verify.replica` in that rank's process:
  params / param_digests   digest of every optimizer parameter after the optimizer step (all, each)
  grads / grad_digests     digest of every gradient at the optimizer step, i.e. after DDP's reduction
  batch                    digest of the tensors the models' forward received since the previous step
  layout                   digest of the parameters' shapes and dtypes (ranks holding different
                           parameters, as FSDP shards or model parallelism do, are not compared)
  sharded                  True when a parameter is a shard (FSDP flat parameter, sharded DTensor)
  names                    the parameters' names, in the digest lists' order (once per optimizer)
Steps are matched by their number: step k is every rank's k-th optimizer step.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable

from stabfix.verify.metrics import fmt_bytes

HEAVY_RATIO = 1.25  # a rank whose peak is this many times the other ranks' median is named ...
HEAVY_MIN_BYTES = 1 << 20  # ... when it is also at least this much more
MIN_SAME_BATCH_STEPS = 2  # identical batches on this many steps (or on every step compared) fail


def _check(name: str, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "status": status, "message": message, **extra}


def _ranks_text(ranks: Iterable[int]) -> str:
    ranks = sorted(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def split_off(values: dict[int, Any]) -> tuple[list[int], list[int]]:
    """(the ranks that agree, the ranks that differ from them). The reference is the largest group of
    equal values; on a tie, the group holding the lowest rank (with two ranks: rank 0)."""
    groups: dict[Any, list[int]] = {}
    for rank in sorted(values):
        groups.setdefault(values[rank], []).append(rank)
    reference = max(groups.values(), key=lambda ranks: (len(ranks), -ranks[0]))
    return reference, sorted(r for r in values if r not in reference)


def _sync(step: dict[str, Any]) -> dict[str, Any]:
    return step.get("sync") or {}


def _by_step(per_rank: dict[int, list[dict[str, Any]]]) -> dict[int, dict[int, dict[str, Any]]]:
    """step number -> rank -> that rank's sync record, for the steps every rank reached."""
    table: dict[int, dict[int, dict[str, Any]]] = {}
    for rank, steps in per_rank.items():
        for step in steps:
            if _sync(step):
                table.setdefault(int(step["step"]), {})[rank] = _sync(step)
    return {n: row for n, row in sorted(table.items()) if len(row) == len(per_rank)}


def _names(per_rank: dict[int, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Parameter layout -> the parameters' names (sent once per optimizer)."""
    names: dict[str, list[str]] = {}
    for steps in per_rank.values():
        for step in steps:
            if _sync(step).get("names"):
                names.setdefault(_sync(step).get("layout"), list(_sync(step)["names"]))
    return names


def _which_differ(rows: dict[int, dict[str, Any]], reference: int, rank: int, key: str,
                  all_names: dict[str, list[str]]) -> list[str]:
    names = all_names.get(rows[reference].get("layout"), [])
    mine = rows[rank].get(key) or []
    theirs = rows[reference].get(key) or []
    return [names[i] if i < len(names) else f"#{i}" for i, (a, b) in enumerate(zip(mine, theirs)) if a != b]


def _same_state(table: dict[int, dict[int, dict[str, Any]]], names: dict[str, list[str]], key: str, each: str,
                name: str, what: str, when: str) -> dict[str, Any] | None:
    """One check: `key` (a digest of every parameter or gradient) equal on every rank at every step."""
    compared = [n for n, row in table.items() if all(r.get(key) is not None for r in row.values())]
    if not compared:
        return None
    for n in compared:
        row = table[n]
        agree, differ = split_off({rank: rec[key] for rank, rec in row.items()})
        if differ:
            reference = agree[0]
            which = _which_differ(row, reference, differ[0], each, names)
            shown = ", ".join(which[:3]) + (f" and {len(which) - 3} more" if len(which) > 3 else "")
            detail = f" ({shown})" if shown else ""
            return _check(name, "fail",
                          f"{what} differ across ranks {when} step {n}: {_ranks_text(differ)} differ"
                          f"{'s' if len(differ) == 1 else ''} from {_ranks_text(agree)}{detail}",
                          step=n, ranks=differ, reference=agree, parameters=which)
    return _check(name, "pass", f"{what} identical on every rank {when} each of {len(compared)} optimizer step(s)",
                  steps=len(compared))


def _layouts_differ(table: dict[int, dict[int, dict[str, Any]]]) -> str | None:
    for row in table.values():
        if any(rec.get("sharded") for rec in row.values()):
            return "parameters are sharded across ranks (FSDP), so ranks hold different tensors"
        if len({rec.get("layout") for rec in row.values()}) > 1:
            return "ranks hold parameters of different shapes (sharded or model-parallel)"
    return None


def _samples(table: dict[int, dict[int, dict[str, Any]]], sharded: bool) -> dict[str, Any] | None:
    """Ranks that received the very same batch at the same step trained on the same samples. When the
    ranks hold different parts of the model (`sharded`), a warning: tensor parallelism feeds every
    rank of a group the same batch on purpose (FSDP does not, but the two cannot be told apart here)."""
    compared = 0
    same_steps: dict[tuple[int, ...], list[int]] = {}
    for n, row in table.items():
        batches = {rank: rec.get("batch") for rank, rec in row.items()}
        if any(b is None for b in batches.values()):
            continue
        compared += 1
        groups: dict[str, list[int]] = {}
        for rank, digest in sorted(batches.items()):
            groups.setdefault(digest, []).append(rank)
        for ranks in groups.values():
            if len(ranks) > 1:
                same_steps.setdefault(tuple(ranks), []).append(n)
    if not compared:
        return None
    worst = max(same_steps.items(), key=lambda item: len(item[1]), default=None)
    if worst and len(worst[1]) >= min(MIN_SAME_BATCH_STEPS, compared):
        ranks, steps = worst
        caveat = " (expected only with tensor or pipeline parallelism)" if sharded else ""
        return _check("different samples", "warn" if sharded else "fail",
                      f"{_ranks_text(ranks)} received identical batches at {len(steps)} of {compared} step(s) "
                      f"(first: step {steps[0]}): every rank trains on the same samples; shard the data with "
                      f"DistributedSampler (or accelerate/Lightning's sampler){caveat}",
                      ranks=list(ranks), steps=steps)
    return _check("different samples", "pass", f"each rank received different batches at each of {compared} step(s)")


def _epoch_order(per_rank: dict[int, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """A rank whose batches come again in the same order (an epoch replayed: no `set_epoch`, or no
    shuffling) - a warning, since a fixed order can be deliberate."""
    for rank in sorted(per_rank):
        batches = [(int(s["step"]), _sync(s).get("batch")) for s in per_rank[rank]]
        batches = [(n, b) for n, b in batches if b is not None]
        seen: dict[str, int] = {}
        for i, (n, digest) in enumerate(batches):
            if digest in seen:
                first = seen[digest]
                period = i - first
                replay = [b for _, b in batches[i:]]
                if replay == [b for _, b in batches[first:first + len(replay)]] and len(replay) >= min(2, period):
                    return _check("sample order", "warn",
                                  f"rank {rank}'s batches from step {n} repeat those from step {batches[first][0]} "
                                  "in the same order: every epoch sees the same order (call "
                                  "DistributedSampler.set_epoch(epoch) each epoch, or shuffle)",
                                  rank=rank, step=n, repeats_step=batches[first][0])
                break
            seen[digest] = i
    return None


def _heavy_rank(peaks: dict[int, int | None]) -> dict[str, Any] | None:
    known = {rank: peak for rank, peak in peaks.items() if isinstance(peak, int)}
    if len(known) < 2:
        return None
    heaviest = max(sorted(known), key=lambda rank: known[rank])
    others = statistics.median(peak for rank, peak in known.items() if rank != heaviest)
    if known[heaviest] >= HEAVY_RATIO * others and known[heaviest] - others >= HEAVY_MIN_BYTES:
        return _check("memory per rank", "warn",
                      f"rank {heaviest} peaks {known[heaviest] / others:.2f}x the other ranks' memory "
                      f"({fmt_bytes(known[heaviest])} vs {fmt_bytes(int(others))}): work done only on rank {heaviest} "
                      "(logging, evaluation, a checkpoint loaded without map_location) limits the batch size "
                      "of every rank", rank=heaviest, ratio=known[heaviest] / others)
    return _check("memory per rank", "pass", f"peak memory within {HEAVY_RATIO:g}x across ranks")


def compare_ranks(per_rank: dict[int, list[dict[str, Any]]], peaks: dict[int, int | None]) -> list[dict[str, Any]]:
    """The cross-rank checks (status pass / fail / warn, or `skip` with the reason) of the steps every
    rank completed. `per_rank`: rank -> its step records; `peaks`: rank -> its peak memory in bytes."""
    if len(per_rank) < 2:
        return []
    table = _by_step(per_rank)
    names = _names(per_rank)
    checks: list[dict[str, Any]] = []
    unlike = _layouts_differ(table)
    if unlike:
        checks.append(_check("parameters in sync", "skip", f"not compared: {unlike}"))
    else:
        for found in (
            _same_state(table, names, "grads", "grad_digests", "gradients reduced", "gradients",
                        "at"),
            _same_state(table, names, "params", "param_digests", "parameters in sync", "parameters", "after"),
        ):
            if found is not None:
                checks.append(found)
    for found in (_samples(table, sharded=unlike is not None), _epoch_order(per_rank), _heavy_rank(peaks)):
        if found is not None:
            checks.append(found)
    return checks

