"""Every word list and name pattern the model and the rules use, in one place.

Names are evidence, never proof: a rule may use these to break a tie between readings the data flow
leaves open, or to word a message; a finding is never decided by a name alone. Keeping them here
shows at a glance how much each rule leans on names, and stops two rules from growing two
different ideas of what "looks like a step" or "looks like a model".
"""

from __future__ import annotations

import re
from pathlib import PurePath

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


# --- losses, tensor roles and host memory (SF101, SF102, SF401) -------------------------------------

# from losses.py
LOSS_WORDS = frozenset({"loss", "losses", "criterion", "criterions", "criteria", "crit", "lossfn", "objective"})

# from losses.py
# Loss-word names that hold something else: `loss_weights`, `loss_scaler`, `loss_history`.
NOT_A_LOSS_VALUE_WORDS = frozenset(
    {
        "weight", "weights", "scale", "scales", "scaler", "scaling", "history", "meter", "meters", "tracker",
        "names", "name", "keys", "fmt", "format", "str", "curve", "curves", "window", "coef", "coeff", "factor",
        "type", "types", "cfg", "config", "kwargs", "args",
    }
)

# from losses.py
# ... and callees with a loss word that compute something else: `get_loss_weights()`, `log_loss(...)`.
NOT_A_LOSS_CALL_WORDS = NOT_A_LOSS_VALUE_WORDS | frozenset(
    {
        "get", "log", "logger", "logging", "print", "plot", "save", "record", "update", "dict", "list", "write",
        "show", "reset", "init", "grad", "grads", "backward", "step", "item", "value", "values", "ema", "avg",
        "average", "smooth", "smoothed", "build", "make", "create", "register", "add", "append",
    }
)

# from loss_operands.py
# Keyword arguments of user losses that are not tensors to compare.
METADATA_WORDS = frozenset(
    {
        "len", "lens", "length", "lengths", "mask", "masks", "weight", "weights", "w", "idx", "index", "indices",
        "num", "n", "size", "sizes", "count", "step", "steps", "epoch", "scale", "temperature", "temp", "tau",
        "margin", "eps", "epsilon", "dim", "reduction", "reduce", "ignore", "lr", "alpha", "beta", "gamma",
        "lam", "lambda", "t", "time", "timestep", "timesteps", "sigma", "sigmas", "valid", "self", "model",
        "config", "cfg", "args", "opt", "device", "dtype", "shape", "kwargs", "name", "mode", "training",
        "label", "labels", "class", "classes", "cls", "positions", "offsets", "batch",
    }
)

# from loss_operands.py
# Words that say a name holds data to compare (`x_t`, `t_logits`, `model_pred`, `feat_mask`).
TENSOR_VALUE_WORDS = frozenset(
    {
        "x", "y", "z", "h", "pred", "preds", "prediction", "logits", "logit", "out", "output", "outputs", "target",
        "targets", "tgt", "ref", "src", "source", "feat", "feats", "features", "emb", "embeds", "embedding",
        "latent", "latents", "img", "image", "images", "hidden", "probs", "scores", "recon", "gt",
    }
)

# from loss_operands.py
# Callees that draw random numbers: two calls on one tensor differ (R-Drop compares two dropout passes).
RANDOM_CALL_WORDS = frozenset({"dropout", "drop", "noise", "rand", "randn", "augment", "aug", "sample", "bernoulli"})

# from devices.py
# Parts of a variable name that say the value is (or is configured as) host memory.
HOST_WORDS = ("cpu", "host", "offload", "storage", "cache", "pinned")

# from sf401_reference_aliases_source.py
# Words of a keyword that says its slot takes the model's prediction, not a reference: `logits=`,
# `pooled_logits=`, `student_logits=`.
PREDICTION_WORDS = frozenset({"pred", "preds", "prediction", "predictions", "output", "outputs", "logits", "logit"})

# from sf401_reference_aliases_source.py
# The roles a name gives a tensor in a loss. An alias whose name claims another role than its source's
# (`x_style_ref = x_src`, `f_style = f_content`, `tgt = src`) was meant to hold a different tensor;
# one that keeps the role or claims none (`gt_usm = gt`, `clean = x`) is a second name for one target.
ALIAS_ROLES = (
    frozenset({"style"}),
    frozenset({"content"}),
    frozenset({"src", "source", "input", "inp", "orig", "original"}),
    frozenset({"ref", "reference", "target", "tgt", "gt", "goal"}),
)

# from container_roles.py
PER_STEP_METHOD_WORDS = ("step", "batch", "forward", "reset", "clear", "epoch", "flush", "invalidate", "start", "end")

# from events.py
# Objects whose `.backward(loss)` takes the loss as argument (accelerate, Fabric, DeepSpeed engines);
# on a tensor, a positional argument is the incoming gradient instead.
BACKWARD_WRAPPER_NAMES = {"accelerator", "fabric", "engine", "model_engine", "strategy", "trainer"}

# from flows.py (SF107)
# Receivers of log calls: a loaded value handed to `logger.info(...)` is only looked at, not used.
LOG_RECEIVER_NAMES = frozenset({"logger", "logging", "log", "_logger", "LOGGER", "warnings"})
# --- adapters and frozen bases (SF109) ----------------------------------------------------------------

# from adapters.py
# Words of a module or function name that say it builds a model with adapter layers
# (`from lora_model import load_policy`): the only evidence a file has about a model built elsewhere.
ADAPTER_WORDS = frozenset({"lora", "qlora", "dora", "adapter", "adapters", "peft"})
# --- mixed precision and anomaly mode (SF203, SF301, SF302) --------------------------------------------

# A test that picks code by torch version or by what torch provides: `torch.__version__ >= "2.4"`,
# `TORCH_2_4`, `_TORCH_GREATER_EQUAL_2_4`, `hasattr(torch, "amp")`: the other branch is a fallback.
VERSION_TEST = re.compile(r"(version|torch_?\d|greater_?equal|less_?than|hasattr\(|getattr\()", re.I)
# A called object named like a loss scaler does the scaled backward (timm's `loss_scaler(loss, optimizer)`).
SCALER_NAME = re.compile(r"scaler", re.I)
# from the event-order rules (SF303, SF404-SF406, SF408)
# Base classes whose `training_step` the Lightning trainer calls once per batch (SF404: with manual
# optimization, clearing the gradients is the step's own job).
LIGHTNING_MODULE_BASES = frozenset({"LightningModule"})
# Limits that make a clip only measure the norm (`clip_grad_norm_(params, float("inf"))`, for logging).
INFINITE_LIMITS = frozenset({
    "inf", "math.inf", "torch.inf", "np.inf", "numpy.inf", 'float("inf")', 'float("Inf")', 'float("infinity")',
})
# Calls of another module's helper that clear gradients (`pyro.infer.util.zero_grads(params)`,
# `utils.clear_grads(model)`); the file cannot show their body, so the name says what they do (SF404
# only lets them silence a finding, never raise one).
GRADIENT_CLEAR_CALL = re.compile(r"^_*(zero|clear|reset|zeros)_?(the_)?grad(s|ients)?_?$", re.IGNORECASE)
# Frameworks whose backward overwrites the gradient instead of adding into it (MXNet's default
# `grad_req="write"`): a loop without a clear is fine there.
OVERWRITING_AUTOGRAD_MODULES = ("mxnet",)
# --- SF202 host syncs / SF204 generation in the training step -----------------------------------

# Keyword arguments that only generation takes (`model.generate(ids, max_new_tokens=32)`): evidence
# that a call decodes; together with a name word below for calls that are not `.generate`.
GENERATION_SETTINGS = frozenset(
    {
        "max_new_tokens", "min_new_tokens", "max_length", "max_len", "max_gen_len", "max_decode_len",
        "num_beams", "do_sample", "top_k", "top_p", "generation_config", "num_return_sequences",
        "sampling_params", "max_tokens", "beam_size", "greedy",
    }
)
# Breaks the tie for a call passing generation settings: it decodes (not a tokenizer padding to `max_length`).
GENERATION_CALL_WORD = re.compile(r"(generat|decode|sampl|rollout|beam|greedy|autoregress)", re.I)
# Calls that only look at what generation made: logging, decoding ids to text, metric writers.
OBSERVING_CALLS = frozenset(
    {
        "print", "decode", "batch_decode", "convert_ids_to_tokens", "add_text", "add_scalar", "add_scalars",
        "log", "log_text", "log_dict", "write", "set_postfix", "set_description", "len", "str",
    }
)
# SF103 / SF106 / SF407 (graph kept alive, evaluation with autograd on, train/eval mode)
# Words of an iterable that draws evaluation batches (`val_loader`, `test_dataset`): they break the tie
# between a loop that sums a loss over data (evaluation) and one that sums the parts of one loss.
DATA_SOURCE_WORDS = frozenset({"loader", "dataloader", "dataset", "batches", "iterator", "dl", "ds"})

# loss-scaler classes (torch.amp / torch.cuda.amp / FSDP's sharded one): their state dicts hold Python numbers
SCALER_CLASSES = ("GradScaler", "ShardedGradScaler")


def is_test_path(path: str) -> bool:
    """A test file or a file under a tests folder (`test_*.py`, `*_test.py`, `conftest.py`, `tests/`)."""
    pure = PurePath(path)
    name = pure.name
    return (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
        or any(part in ("tests", "test") for part in pure.parts[:-1])
    )
