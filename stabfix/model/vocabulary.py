"""Every word list and name pattern the model and the rules use, in one place.

Names are evidence, never proof: a rule may use these to break a tie between readings the data flow
leaves open, or to word a message; a finding is never decided by a name alone. Keeping them here
shows at a glance how much each rule leans on names, and stops two rules from growing two
different ideas of what "looks like a step" or "looks like a model".
"""

from __future__ import annotations

import re

# --- training structure: step functions, hooks, counters, device checks ---------------------------

STEP_FUNCTION_NAMES = {
    "train_step",
    "training_step",
    "train_batch",
    "train_on_batch",
    "train_one_batch",
    "train_one_step",
    "train_iteration",
    "train_iter",
    "training_iteration",
    "fit_batch",
    "fit_step",
    "optimize_step",
    "optimization_step",
    "update_step",
}
PER_BATCH_HOOKS = {
    "on_train_batch_start",
    "on_train_batch_end",
    "on_before_backward",
    "on_after_backward",
    "on_before_optimizer_step",
    "on_before_zero_grad",
    "on_optimizer_step",
    "on_step_begin",
    "on_step_end",
    "on_substep_end",
    "on_batch_begin",
    "on_batch_end",
    "before_batch",
    "after_batch",
    "before_step",
    "after_step",
    "before_backward",
    "after_backward",
}
NEVER_STEP_FUNCTION = re.compile(
    r"^(__\w+__|close|shutdown|teardown|tear_down|.*clean_?up.*|free_memory|release_memory"
    r"|on_(train|fit|run)_(end|start)|on_\w*epoch\w*|on_(validation|test|predict|sanity|save|load|exception|evaluate)\w*"
    r"|(eval|evaluat|valid|test|predict|generate|sample|inference|benchmark|profile)\w*)$"
)
# test, benchmark and check harnesses run backward passes but are not training
HARNESS_FUNCTION = re.compile(
    r"^_*(test|check|verify|assert|bench|benchmark|profile|measure|compare|run_test|debug|sanity)(_|$)"
)
FRAMEWORK_STEP_BASE = re.compile(r"(LightningModule|Trainer)$")
HOOK_BASE = re.compile(r"(Callback|Hook|LightningModule|Handler)$")
STEP_COUNTER_NAME = re.compile(
    r"^((global|cur|current|train)_)?(step|iteration|iter|it|itr|step_?(idx|num|count|index)"
    r"|batch_?(idx|nb|num|index|i)|i_iter)$"
)
STEP_COUNTER_ATTRIBUTE = re.compile(r"(step|iter|batch|update)", re.I)
INTERVAL_NAME = re.compile(r"(interval|every|freq|period)", re.I)
DEVICE_FLAG_NAME = re.compile(
    r"^(is_|use_|has_|on_|with_)?(cuda|gpu|gpus|mps|xpu|npu|mlu|musa|hpu|accelerator)(_available)?$"
)
DEVICE_AVAILABLE_FUNCTION = re.compile(r"^is_(torch_)?(cuda|gpu|mps|xpu|npu|mlu|musa|hpu|sdaa|neuron)\w*_available$")
DEVICE_STRINGS = {"cuda", "cpu", "mps", "xpu", "npu", "mlu", "musa", "hpu", "gpu", "meta"}


# Supporting evidence only: the name of a call the file can neither resolve nor find defined.
MEMORY_NAME = re.compile(r"(mem|vram)", re.I)


# --- cleanup (SF201): device handles, model swaps, what a deleted name held --------------------------

# `get_accelerator().empty_cache()` (deepspeed), `get_torch_device().empty_cache()` (verl)
DEVICE_MODULE_GETTER = re.compile(r"^get_(torch_)?(device|accelerator)(_module)?$")
# `X.empty_cache()` on a device-module handle: `self.device_module`, `accelerator`, `torch_backend`...
DEVICE_HANDLE_NAME = re.compile(r"(device|accelerator|backend|cuda|mps|xpu|npu|mlu|musa)", re.I)

# A statement next to the cleanup that moves or swaps a model makes the cleanup a phase boundary.
MODEL_SWAP_WORDS = (
    "offload",
    "onload",
    "swap",
    "sleep",
    "wake_up",
    "load_model",
    "unload",
    "reload",
    "load_state_dict",
    "load_adapter",
    "set_adapter",
    "deparallelize",
    "sync_weights",
    "update_weights",
    "load_weights",
    "vllm",
    "move_model",
)

MODEL_WORDS = {
    "model",
    "models",
    "engine",
    "pipe",
    "pipeline",
    "llm",
    "vae",
    "unet",
    "teacher",
    "ref",
    "reference",
    "critic",
    "actor",
    "reward",
    "policy",
    "net",
    "module",
}

TENSOR_WORDS = {
    "output",
    "outputs",
    "out",
    "logits",
    "loss",
    "losses",
    "pred",
    "preds",
    "grad",
    "grads",
    "input",
    "inputs",
    "batch",
    "logp",
    "logps",
    "logprob",
    "logprobs",
}


# --- optimizers: factories and identifier words ------------------------------------------------------

OPTIMIZER_FACTORY_NAME = re.compile(
    r"^_*(create|build|make|get|init|setup|configure|load|instantiate|new|prepare)_?optimi[sz]ers?(_v\d+)?$"
    r"|^optimi[sz]er_?(factory|builder)$"
)
# Identifier words (split on `_` and camelCase) that make a name an optimizer, or that rule it out.
OPTIMIZER_WORDS = {"optimizer", "optimiser", "optimizers", "optimisers", "optim", "optims"}
OPTIMIZER_SHORT_WORDS = {"opt", "opts", "optm"}
NOT_OPTIMIZER_WORDS = {
    "sched", "scheduler", "schedulers", "state", "states", "cls", "class", "config", "cfg", "conf", "kwargs",
    "args", "name", "names", "type", "types", "param", "params", "group", "groups", "factory", "builder",
    "fn", "func", "step", "steps", "option", "options", "flag", "hparams", "spec", "mode", "key", "keys",
    "dict", "path", "file", "ckpt", "checkpoint", "lr", "idx", "index", "num", "kind", "str", "id", "level",
}


def identifier_words(name: str) -> list[str]:
    """`g_optimizer` -> [g, optimizer]; `optimizerD` -> [optimizer, d]; `optG2` -> [opt, g, 2]."""
    return [word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]
