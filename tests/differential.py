"""Differential runs of every fix: a rule's bad example and its fixed form run on CPU, with the same
seeded inputs, in float32, bfloat16 and float16, and everything the program leaves behind is compared.

A bad example is a snippet (a training function, a trainer class, a module-level loop), not a program,
so a generic driver runs it: the module is executed with its free names bound to synthesized objects,
then every top-level function is called and every class is instantiated and each of its methods called,
with arguments synthesized from the parameter names (a tiny model for `model`, batches for `loader`, an
SGD optimizer over the model for `optimizer`...). Third-party imports (lightning, transformers, accelerate,
a project's own modules) are stubs. What a run leaves behind is observed: return values, tensors and
containers in module globals and on driven instances, every harness model's parameters and gradients,
optimizer state, files written to the temporary directory, and printed output.

CUDA is simulated on CPU while a snippet runs (the table in bench/README.md lists this too):
`torch.cuda.is_available()` is True, `.cuda()` and `.to("cuda")` stay on the CPU, `torch.device("cuda")`
is the CPU, autocast for "cuda" is CPU autocast in float16 (CUDA's default dtype), a "cuda" GradScaler is
a CPU GradScaler (it really scales), and CUDA memory queries, synchronize and empty_cache do nothing.

A fix is judged only when the run reached every line the fix changed (traced); otherwise it is "not
runnable" with the reason. `python tests/differential.py --table` writes the table of every fix into
bench/README.md.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import difflib
import importlib.abc
import importlib.machinery
import inspect
import io
import math
import os
import random
import re
import sys
import tempfile
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

EXAMPLE_FILE = "<stabfix-example>"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
FEATURES = 4
BATCH = 2
BATCHES = 4  # an accumulation gate every 2 or 4 micro-batches fires at least once
SMALL_INT = 2
LINE_BUDGET = 200_000  # traced lines per run: a loop the driver cannot end is stopped, not waited for

# --------------------------------------------------------------------------------------------------
# the tiny model and the data it eats


class TinyNet(nn.Module):
    """One linear layer that takes whatever a snippet feeds a model: a tensor of any shape (flattened
    and cut or padded to FEATURES), a dict or batch (its first tensor), keyword inputs (`model(**batch)`).
    Given an input and a target it returns their loss (`loss = model(x, y)`); its output carries
    `.loss` and `.logits` (Hugging Face style), and any unknown method (`model.encode(x)`) is forward."""

    def __init__(self, seed: int, dtype: torch.dtype) -> None:
        super().__init__()
        # named so that a snippet's `"lora_" in name` filter finds it; `model.classifier` & co. reach it too
        self.lora_head = nn.Linear(FEATURES, FEATURES, dtype=dtype)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            self.lora_head.weight.copy_(torch.randn(FEATURES, FEATURES, generator=generator) * 0.5)
            self.lora_head.bias.copy_(torch.randn(FEATURES, generator=generator) * 0.1)

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        tensors = [value for value in _tensors_in((*args, *kwargs.values()))]
        x = tensors[0] if tensors else torch.ones(BATCH, FEATURES)
        weight = self.lora_head.weight
        if not x.is_floating_point():  # token ids: one-hot over FEATURES "words", so logits are (..., vocab)
            x = F.one_hot(x.long() % FEATURES, FEATURES)
        x = x.to(weight.dtype)
        if x.dim() == 0:
            x = x.reshape(1, 1)
        elif x.dim() == 1:
            x = x.reshape(1, -1)
        elif x.dim() != 3:  # images and the like: one row per sample; a sequence keeps its positions
            x = x.flatten(1)
        x = F.pad(x, (0, max(0, FEATURES - x.shape[-1])))[..., :FEATURES]
        out = self.lora_head(x)
        if len(tensors) >= 2:
            loss = _loss_against(out, tensors[1])
            loss.logits = out
            loss.loss = loss
            return loss
        out.logits = out.last_hidden_state = out.input_ids = out
        out.hidden_states = (out, out)
        out.loss = out.float().pow(2).mean().to(out.dtype)
        return out

    LAYER_NAMES = {"classifier", "head", "fc", "lm_head", "linear", "layer", "out", "proj", "output_layer", "score"}

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("_"):
                raise
            if name in self.LAYER_NAMES:
                return self.lora_head
            if "loss" in name:  # `agent.ppo_loss(batch)`: a scalar that backward() takes
                return lambda *args, **kwargs: self(*args, **kwargs).pow(2).mean()
            if MODEL_NAMES.search(name.lower()):  # `agent.policy`: the network is the model itself
                return self
            return lambda *args, **kwargs: self(*args, **kwargs)


def _loss_against(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if not target.is_floating_point():
        logits = out.reshape(-1, FEATURES)
        return F.cross_entropy(logits, target.reshape(-1)[: logits.shape[0]] % FEATURES)
    return F.mse_loss(out, target.to(out.dtype).reshape(out.shape) if target.numel() == out.numel() else out.detach())


def _tensors_in(values: Any):
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, dict):
            yield from _tensors_in(value.values())
        elif isinstance(value, (list, tuple)):
            yield from _tensors_in(value)


class Batch(dict):
    """A batch that unpacks as `(x, y)`, indexes as `batch[0]`/`batch["x"]`/`batch["labels"]` and
    spreads as `model(**batch)`."""

    TARGET_KEYS = {"y", "label", "labels", "target", "targets", "returns", "reward", "rewards", "clean", 1,
                   "chosen", "rejected", "chosen_ids", "rejected_ids", "actions"}

    def __iter__(self):
        return iter((self["x"], self["y"]))

    def __len__(self) -> int:
        return 2

    def __missing__(self, key: Any) -> Any:
        if key in ("act", "action", "actions"):  # indices for `q.gather(1, batch.act)`
            return (torch.arange(BATCH) % FEATURES).unsqueeze(1)
        if isinstance(key, str) and "mask" in key:
            return torch.ones(dict.__getitem__(self, "y").shape, dtype=torch.get_default_dtype())
        return dict.__getitem__(self, "y" if key in self.TARGET_KEYS else "x")

    def to(self, *args: Any, **kwargs: Any) -> "Batch":
        return self

    def pop(self, key: Any, *default: Any) -> Any:
        return dict.pop(self, key) if key in self else self[key]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        x = dict.__getitem__(self, "x")
        if hasattr(torch.Tensor, name):  # `batch.size(0)`, `batch.shape`: the batch as its input tensor
            return getattr(x, name)
        return self[name]  # `batch.obs`, `batch.labels`


class Triple(Batch):
    """A batch of (sample ids, inputs, targets)."""

    def __iter__(self):
        return iter((self["ids"], self["x"], self["y"]))

    def __len__(self) -> int:
        return 3


class Loader(list):
    """A list of batches that is also an iterator (`next(batches)` cycles through it)."""

    _position = 0

    def sample(self, *args: Any, **kwargs: Any) -> Any:
        """`replay_buffer.sample()`: the next batch."""
        return next(self)

    def __next__(self) -> Any:
        item = self[self._position % len(self)]
        self._position += 1
        return item


class Anything:
    """A third-party object the file only passes around: every attribute and call gives another one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> "Anything":
        return Anything()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __iter__(self):
        return iter(())

    def __enter__(self) -> "Anything":
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False


# --------------------------------------------------------------------------------------------------
# synthesized objects, shared by one run


MODEL_NAMES = re.compile(
    r"model|net$|^net|module|student|teacher|policy|backbone|encoder|decoder|critic|actor|discriminator|"
    r"generator|mapper|head|classifier|agent|network|reference|q_net|target_net|ref$|_fn$|unet"
)
TEACHER_NAMES = re.compile(r"teacher|target_net|reference|ref_model|frozen|ema")
OPTIMIZER_NAMES = re.compile(r"optim|^opt$|^opt_|_opt$")
LOADER_NAMES = re.compile(r"loader|batches|^data$|dataset|iterator|stream|_iter$|^iter_|^data_|buffer|replay|_dl$|^dl$")
BATCH_NAMES = re.compile(r"batch$|^batch|^inputs$|^sample$|^minibatch")
TARGET_NAMES = re.compile(r"^y$|target|label|returns|rewards?$|^r$|^gt$|^clean$|^truth")
INT_NAMES = re.compile(
    r"step|epoch|episode|^n$|^n_|count|num|iter|idx|index|every|interval|^k$|accum|size|^i$|^j$|dones?$|^a$|actions?"
)
FLOAT_NAMES = re.compile(r"^lr$|^eps|_eps$|epsilon|gamma|^t$|temperature|weight|alpha|beta|scale|^w$|coef|lambda|clip|max_norm|tau")
PATH_NAMES = re.compile(r"path|ckpt|checkpoint|file|^fn$|dir$|folder")
CRITERION_NAMES = re.compile(r"criterion|loss_fn|loss_func")


@dataclass
class Profile:
    """One way of synthesizing inputs: the driver tries each and keeps the one that runs furthest."""

    targets: str = "regression"  # regression: y like the output; classes: y integer labels
    checkpoint: str = "state_dict"  # what a file a snippet loads holds: the model's state dict, a dict of them, the pickled model
    batch: str = "pair"  # pair: batches are (x, y); triple: (ids, x, y); tokens: (token ids, next token ids)

    def label(self) -> str:
        return f"targets={self.targets}, checkpoint={self.checkpoint}, batches={self.batch}"


PROFILES = [
    Profile("regression", "state_dict", "pair"),
    Profile("classes", "state_dict", "pair"),
    Profile("regression", "dict", "pair"),
    Profile("classes", "dict", "pair"),
    Profile("classes", "state_dict", "tokens"),
    Profile("regression", "state_dict", "triple"),
    Profile("classes", "state_dict", "triple"),
    Profile("regression", "module", "pair"),
]
SEQUENCE = 3  # tokens per sequence in the tokens profile


class Settings(types.SimpleNamespace):
    """`args.init_weights`, `cfg.amp`: a setting nobody set is synthesized by its name."""

    def __init__(self, context: "Context", **values: Any) -> None:
        super().__init__(**values)
        object.__setattr__(self, "_context", context)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = True if re.fullmatch(r"amp|fp16|bf16|use_\w+|\w+_enabled", name) else self._context.for_name(name)
        setattr(self, name, value)
        return value


class Context:
    def __init__(self, dtype: torch.dtype, profile: Profile, folder: Path) -> None:
        self.dtype = dtype
        self.profile = profile
        self.folder = folder
        self.models: list[TinyNet] = []
        self.optimizers: list[torch.optim.Optimizer] = []
        self.named: dict[str, Any] = {}
        self.called: set[str] = set()  # names the snippet calls (`self.text_encoder(ids)`): models
        self.loaded: set[str] = set()  # names the snippet hands torch.load (`th.load(args.init_weights)`): files
        self.generator = torch.Generator().manual_seed(1234)

    # the objects
    def model(self, teacher: bool = False) -> TinyNet:
        model = TinyNet(seed=100 + len(self.models), dtype=self.dtype)
        if teacher:
            model.requires_grad_(False)
        self.models.append(model)
        return model

    def primary_model(self) -> TinyNet:
        for model in self.models:
            if any(p.requires_grad for p in model.parameters()):
                return model
        return self.model()

    def optimizer(self, parameters: Any = None) -> torch.optim.Optimizer:
        params = list(parameters) if parameters is not None else list(self.primary_model().parameters())
        optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        self.optimizers.append(optimizer)
        return optimizer

    def x(self) -> torch.Tensor:
        if self.profile.batch == "tokens":
            return torch.randint(0, FEATURES, (BATCH, SEQUENCE), generator=self.generator)
        return self.floats()

    def floats(self) -> torch.Tensor:
        return torch.randn(BATCH, FEATURES, generator=self.generator).to(self.dtype)

    def y(self) -> torch.Tensor:
        if self.profile.batch == "tokens":
            return torch.randint(0, FEATURES, (BATCH, SEQUENCE), generator=self.generator)
        if self.profile.targets == "classes":
            return torch.randint(0, FEATURES, (BATCH,), generator=self.generator)
        return torch.randn(BATCH, FEATURES, generator=self.generator).to(self.dtype)

    def batch(self) -> Batch:
        if self.profile.batch == "triple":
            return Triple(ids=self.ids(), x=self.x(), y=self.y())
        return Batch(x=self.x(), y=self.y())

    def ids(self) -> torch.Tensor:
        self.next_id = getattr(self, "next_id", 0) + BATCH
        return torch.arange(self.next_id - BATCH, self.next_id)

    def loader(self) -> Loader:
        return Loader(self.batch() for _ in range(BATCHES))

    def criterion(self) -> nn.Module:
        return nn.CrossEntropyLoss() if self.profile.targets == "classes" else nn.MSELoss()

    def checkpoint_path(self, name: str) -> str:
        return self.checkpoint_file(self.folder / f"input-{name}.pt")

    def checkpoint_file(self, path: Path) -> str:
        if not path.exists():
            model = TinyNet(seed=7, dtype=self.dtype)
            if self.profile.checkpoint == "module":
                torch.save(model, path)
            elif self.profile.checkpoint == "state_dict":
                torch.save(model.state_dict(), path)
            else:
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                payload = {"model": model.state_dict(), "state_dict": model.state_dict(),
                           "optimizer": optimizer.state_dict(), "epoch": 1, "step": 1}
                torch.save(payload, path)
        return str(path)

    @staticmethod
    def namespace(**attributes: Any) -> types.SimpleNamespace:
        return types.SimpleNamespace(**attributes)

    def for_name(self, name: str, default: Any = inspect.Parameter.empty) -> Any:
        """An argument for a parameter (or a free variable) called `name`; the same name gets the same
        object within one run, so `train(model, optimizer)` and `evaluate(model)` share the model."""
        key = name.lower().lstrip("_")
        if key in self.named:
            return self.named[key]
        value = self._make(key, default)
        self.named[key] = value
        return value

    def _make(self, key: str, default: Any) -> Any:
        if default is not inspect.Parameter.empty and default is not None:
            return default
        if key in self.loaded:
            return self.checkpoint_path(key)
        if key in ("device", "dev") or key.endswith("_device"):
            return torch.device("cpu")
        if key in ("dtype",):
            return self.dtype
        if key.endswith("dtype"):
            return self.dtype if key == "dtype" else torch.float16  # `self.amp_dtype`: what autocast is given
        if key in self.called and re.search(r"memory|mem_|_gb$|_mb$|bytes", key):
            return lambda *args, **kwargs: 0.0  # `self.memory_gb()`: no memory is in use on the CPU
        if key in self.called and "loss" in key and not CRITERION_NAMES.search(key):
            return lambda *args, **kwargs: next(_tensors_in(args)).float().pow(2).mean()  # `self.aux_loss(out)`
        if key in self.called and not OPTIMIZER_NAMES.search(key) and not CRITERION_NAMES.search(key):
            return self.model(teacher=bool(TEACHER_NAMES.search(key)))
        if key in ("state", "trainer_state"):
            return types.SimpleNamespace(global_step=0, epoch=0, max_steps=SMALL_INT)
        if key == "loss" or key.endswith("_loss"):
            return self.primary_model()(self.x(), self.y())
        if re.search(r"idx|index|steps?$|^steps?_|^n_|^num_|count|epoch|accum", key):
            return SMALL_INT
        if OPTIMIZER_NAMES.search(key):
            return self.optimizer()
        if "sched" in key:
            return torch.optim.lr_scheduler.StepLR(self.optimizers[-1] if self.optimizers else self.optimizer(), 1)
        if "scaler" in key:
            return torch.amp.GradScaler("cpu")
        if CRITERION_NAMES.search(key):
            return self.criterion()
        if key.endswith("dir") or key.endswith("folder"):
            folder = self.folder / f"input-{key}"
            folder.mkdir(exist_ok=True)
            return str(folder)
        if PATH_NAMES.search(key):
            return self.checkpoint_path(key)
        if LOADER_NAMES.search(key):
            return self.loader()
        if BATCH_NAMES.search(key):
            return self.batch()
        if re.search(r"logits|probs|logp|scores|emb|feats|features|hidden|^h$|^z$", key):
            return self.floats()
        if re.search(r"len$|length|^hidden$|^vocab|dim$", key):
            return SMALL_INT
        if key == "ids" or key.endswith("_ids") or key.endswith("_id") or key == "keys":
            return self.ids()
        if re.fullmatch(r"a|actions?", key):
            return torch.randint(0, FEATURES, (BATCH, 1), generator=self.generator)
        if key == "mask" or key.endswith("_mask"):
            return torch.ones(BATCH, FEATURES, dtype=self.dtype)
        if TARGET_NAMES.search(key):
            return self.y()
        if MODEL_NAMES.search(key) or key in self.called:
            return self.model(teacher=bool(TEACHER_NAMES.search(key)))
        if FLOAT_NAMES.search(key):
            return 0.5
        if INT_NAMES.search(key):
            return SMALL_INT
        if key in ("args", "config", "cfg", "opts", "hparams", "settings", "conf", "training_args"):
            return Settings(self, gradient_accumulation_steps=SMALL_INT, max_grad_norm=1.0, lr=0.1, fp16=True)
        return self.x()


# --------------------------------------------------------------------------------------------------
# third-party modules are stubs


def _stub_lightning_module(context_getter):
    class LightningModule(nn.Module):
        """A module that shows only its training_step gets a tiny net as its forward, so `self(batch)`
        and `self.parameters()` work; `optimizers()` is what its configure_optimizers returns."""

        automatic_optimization = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__()
            self.stub_net = context_getter().model()

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return self.stub_net(*args, **kwargs)

        def log(self, *args: Any, **kwargs: Any) -> None:
            pass

        log_dict = log

        @property
        def device(self) -> torch.device:
            return torch.device("cpu")

        def optimizers(self) -> torch.optim.Optimizer:
            if "_stub_optimizer" not in self.__dict__:
                configured = None
                if "configure_optimizers" in type(self).__dict__:
                    configured = self.configure_optimizers()
                    while isinstance(configured, (list, tuple)) and configured:
                        configured = configured[0]
                    if isinstance(configured, dict):
                        configured = configured.get("optimizer")
                if not isinstance(configured, torch.optim.Optimizer):
                    configured = context_getter().optimizer(self.parameters())
                else:
                    context_getter().optimizers.append(configured)
                self.__dict__["_stub_optimizer"] = configured
            return self.__dict__["_stub_optimizer"]

        def lr_schedulers(self) -> Any:
            return Anything()

        def manual_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
            loss.backward(*args, **kwargs)

        def clip_gradients(self, optimizer: Any, gradient_clip_val: float = 1.0, **kwargs: Any) -> None:
            torch.nn.utils.clip_grad_norm_(self.parameters(), gradient_clip_val)

        @property
        def trainer(self) -> Any:
            return Anything()

    return LightningModule


def _stub_trainer(context_getter):
    class Trainer:
        def __init__(self, model: Any = None, args: Any = None, *rest: Any, **kwargs: Any) -> None:
            context = context_getter()
            self.model = model if model is not None else context.for_name("model")
            self.args = args if args is not None else context.for_name("args")
            self.optimizer = context.optimizer(self.model.parameters())
            self.accelerator = Accelerator()
            self.state = types.SimpleNamespace(global_step=0, epoch=0, max_steps=SMALL_INT)

        def training_step(self, model: Any, inputs: Any, *args: Any) -> torch.Tensor:
            loss = self.compute_loss(model, inputs)
            loss.backward()
            return loss.detach()

        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False, **kwargs: Any) -> Any:
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

        def log(self, *args: Any, **kwargs: Any) -> None:
            pass

    return Trainer


class Accelerator:
    device = torch.device("cpu")
    sync_gradients = True
    is_main_process = True
    num_processes = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def prepare(self, *objects: Any) -> Any:
        return objects[0] if len(objects) == 1 else objects

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        loss.backward()

    def accumulate(self, *models: Any) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def autocast(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def clip_grad_norm_(self, parameters: Any, max_norm: float, **kwargs: Any) -> torch.Tensor:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)

    def gather(self, value: Any) -> Any:
        return value

    def print(self, *args: Any) -> None:
        print(*args)

    def __getattr__(self, name: str) -> Any:
        return Anything()


def _passthrough(*args: Any, **kwargs: Any) -> Any:
    """A library function: `tqdm(loader)`, `get_peft_model(model, config)` give back their first argument."""
    return args[0] if args else Anything()


class _StubModule(types.ModuleType):
    def __init__(self, name: str, context_getter) -> None:
        super().__init__(name)
        self.__path__ = []  # a package, so `import a.b.c` works
        self._context_getter = context_getter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        known = {
            "LightningModule": lambda: _stub_lightning_module(self._context_getter),
            "Trainer": lambda: _stub_trainer(self._context_getter),
            "Accelerator": lambda: Accelerator,
        }
        if name in known:
            value = known[name]()
        elif name[:1].isupper() and MODEL_NAMES.search(name.lower()):
            value = _stub_model_class(name, self._context_getter)
        elif name[:1].isupper():
            value = type(name, (Anything,), {})
        else:
            value = _passthrough
        setattr(self, name, value)
        return value


def _stub_model_class(name: str, context_getter) -> type:
    """`from mynet import Net; Net()`: a project's network is a harness model, so what the file loads into
    it and trains is observed; a subclass the file writes (`class Policy(BaseNet)`) stays its own class."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return context_getter().model() if cls is stub else object.__new__(cls)

    stub = type(name, (Anything,), {"__new__": __new__})
    return stub


def _imported_by_example() -> bool:
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen") or
                                 frame.f_code.co_filename == __file__):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename == EXAMPLE_FILE


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """An import the example itself makes, outside the standard library, torch and numpy, gets a stub
    module (imports torch makes lazily while the example runs are real)."""

    REAL = {"torch", "numpy", "typing_extensions"}

    def __init__(self, context_getter) -> None:
        self.context_getter = context_getter
        self.created: list[str] = []

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        top = fullname.partition(".")[0]
        if top in self.REAL or top in sys.stdlib_module_names or not _imported_by_example():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        self.created.append(spec.name)
        return _StubModule(spec.name, self.context_getter)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


# --------------------------------------------------------------------------------------------------
# CUDA on the CPU


_REAL_DEVICE = torch.device


class _DeviceMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _REAL_DEVICE)


class _CpuForCudaDevice(metaclass=_DeviceMeta):
    def __new__(cls, *args: Any, **kwargs: Any) -> torch.device:
        device = _REAL_DEVICE(*args, **kwargs)
        return _REAL_DEVICE("cpu") if device.type == "cuda" else device


def _cpu(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("cuda"):
        return "cpu"
    if isinstance(value, _REAL_DEVICE) and value.type == "cuda":
        return _REAL_DEVICE("cpu")
    return value


@contextlib.contextmanager
def cuda_on_cpu():
    patches: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    tensor_to, module_to = torch.Tensor.to, nn.Module.to

    def to_tensor(self, *args, **kwargs):
        kwargs = {key: _cpu(value) if key == "device" else value for key, value in kwargs.items()}
        return tensor_to(self, *[_cpu(arg) for arg in args], **kwargs)

    def to_module(self, *args, **kwargs):
        kwargs = {key: _cpu(value) if key == "device" else value for key, value in kwargs.items()}
        return module_to(self, *[_cpu(arg) for arg in args], **kwargs)

    autocast_init = torch.amp.autocast_mode.autocast.__init__

    def autocast(self, device_type, dtype=None, *args, **kwargs):
        if device_type == "cuda":
            device_type, dtype = "cpu", dtype or torch.float16
        return autocast_init(self, device_type, dtype, *args, **kwargs)

    scaler_init = torch.amp.GradScaler.__init__

    def scaler(self, device="cuda", *args, **kwargs):
        return scaler_init(self, "cpu" if device == "cuda" else device, *args, **kwargs)

    def on_cpu(factory):
        def build(*args, **kwargs):
            return factory(*args, **{key: _cpu(value) if key == "device" else value for key, value in kwargs.items()})
        return build

    # factories handed `device="cuda"` (SF205's fix) build on the CPU like `.cuda()` moves there
    for name in ("zeros", "ones", "full", "empty", "eye", "tensor", "as_tensor", "arange", "linspace", "logspace",
                 "rand", "randn", "randint", "randperm", "zeros_like", "ones_like", "full_like", "empty_like",
                 "rand_like", "randn_like", "randint_like", "normal", "tril_indices", "triu_indices"):
        patch(torch, name, on_cpu(getattr(torch, name)))
    patch(torch.Tensor, "to", to_tensor)
    patch(nn.Module, "to", to_module)
    patch(torch.Tensor, "cuda", lambda self, *a, **k: self)
    patch(nn.Module, "cuda", lambda self, *a, **k: self)
    patch(torch, "device", _CpuForCudaDevice)
    patch(torch.amp.autocast_mode.autocast, "__init__", autocast)
    patch(torch.amp.GradScaler, "__init__", scaler)
    clock = [1000.0]

    def tick(*args):
        # a snippet that prints a timing prints the same one before and after the fix
        clock[0] += 0.001
        return clock[0]

    import time

    for name in ("time", "perf_counter", "monotonic", "process_time"):
        patch(time, name, tick)
    for name in ("time_ns", "perf_counter_ns", "monotonic_ns"):
        patch(time, name, lambda: int(tick() * 1e9))
    patch(torch.cuda, "is_available", lambda: True)
    patch(torch.cuda, "device_count", lambda: 1)
    patch(torch.cuda, "current_device", lambda: 0)
    for name in ("synchronize", "empty_cache", "reset_peak_memory_stats", "set_device", "manual_seed",
                 "manual_seed_all", "ipc_collect"):
        patch(torch.cuda, name, lambda *a, **k: None)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        patch(torch.cuda, name, lambda *a, **k: 0)
    try:
        yield
    finally:
        for owner, name, value in reversed(patches):
            setattr(owner, name, value)


# --------------------------------------------------------------------------------------------------
# observations


_RUN_FOLDER = [""]  # the temporary folder of the current run: its random name is no difference


def canonical(value: Any, seen: set[int] | None = None, depth: int = 0) -> Any:
    """A comparable picture of a value: tensors by dtype, shape, requires_grad and exact values."""
    seen = seen if seen is not None else set()
    if depth > 6:
        return ("deep",)
    if isinstance(value, torch.Tensor):
        data = value.detach()
        floats = data.double().flatten().tolist() if data.numel() <= 4096 else [data.double().sum().item()]
        return ("tensor", str(data.dtype), tuple(data.shape), bool(value.requires_grad), tuple(floats))
    if isinstance(value, str):
        return ("atom", value.replace(_RUN_FOLDER[0], "<tmp>") if _RUN_FOLDER[0] else value)
    if isinstance(value, bool) or value is None:
        return ("atom", value)
    if isinstance(value, (int, float)):
        return ("number", type(value).__name__, float(value))
    if isinstance(value, nn.Module):
        return ("module", type(value).__name__)
    if isinstance(value, torch.optim.Optimizer):
        return ("optimizer", type(value).__name__)
    if id(value) in seen:
        return ("cycle",)
    if isinstance(value, (list, tuple)):
        seen = seen | {id(value)}
        return (type(value).__name__, tuple(canonical(item, seen, depth + 1) for item in value))
    if isinstance(value, dict):
        seen = seen | {id(value)}
        return ("dict", tuple((repr(key), canonical(item, seen, depth + 1)) for key, item in value.items()))
    if callable(value):
        return ("callable",)
    return ("object", type(value).__name__)


@dataclass
class Run:
    observations: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # what raised: where -> "TypeError: ..."
    executed: set[int] = field(default_factory=set)
    raised: set[int] = field(default_factory=set)  # lines where an exception went through
    calls_ok: int = 0
    fatal: str | None = None  # the module itself could not run

    def note(self, where: str, value: Any) -> None:
        self.observations[where] = canonical(value)


class _Budget(Exception):
    pass


def _tracer(executed: set[int], raised: set[int]):
    count = [0]

    def local(frame, event, arg):
        if event == "exception" and not issubclass(arg[0], (StopIteration, GeneratorExit)):
            raised.add(frame.f_lineno)
        elif event == "line":
            executed.add(frame.f_lineno)
            count[0] += 1
            if count[0] > LINE_BUDGET:
                raise _Budget(f"more than {LINE_BUDGET} lines executed")
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename == EXAMPLE_FILE:
            executed.add(frame.f_lineno)
            return local
        return None

    return global_


def _called_names(tree: ast.Module) -> set[str]:
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                called.add(node.func.id.lower().lstrip("_"))
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                    node.func.value.id == "self":
                called.add(node.func.attr.lower().lstrip("_"))
    return called


def _torch_loads(tree: ast.Module) -> list[ast.expr]:
    """The first argument of every `torch.load` call, through `import torch as th` and `from torch import load`."""
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "torch"}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch":
            functions |= {alias.asname or alias.name for alias in node.names if alias.name == "load"}
    return [node.args[0] for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args and (
        isinstance(node.func, ast.Attribute) and node.func.attr == "load" and isinstance(node.func.value, ast.Name)
        and node.func.value.id in modules or isinstance(node.func, ast.Name) and node.func.id in functions)]


def _loaded_names(tree: ast.Module) -> set[str]:
    """`torch.load(args.init_weights)`: whatever the name says, it is a file."""
    names = {argument.id if isinstance(argument, ast.Name) else argument.attr
             for argument in _torch_loads(tree) if isinstance(argument, (ast.Name, ast.Attribute))}
    return {name.lower().lstrip("_") for name in names}


def _loaded_files(tree: ast.Module) -> list[str]:
    """`torch.load("policy.pt")`: a file named in the snippet, relative to the folder it runs in."""
    return [argument.value for argument in _torch_loads(tree) if isinstance(argument, ast.Constant)
            and isinstance(argument.value, str) and not Path(argument.value).is_absolute()]


def _free_names(tree: ast.Module) -> list[str]:
    bound: set[str] = set()
    loaded: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.append(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    free = [name for name in dict.fromkeys(loaded) if name not in bound and not hasattr(builtins, name)]
    return free


def _arguments(function: Any, context: Context, skip_first: bool) -> tuple[list[Any], dict[str, Any]] | None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return [], {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    parameters = list(signature.parameters.values())[1 if skip_first else 0:]
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        value = context.for_name(parameter.name, parameter.default)
        if parameter.kind == parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return args, kwargs


def _synthesize_attributes(cls: type, context: Context) -> None:
    """`self.encoder` that no `__init__` sets (the snippet shows one method) is synthesized by name."""
    original = cls.__dict__.get("__getattr__")
    inherited = getattr(cls, "__getattr__", None)
    if original is not None:
        return

    def fallback(self, name):
        if inherited is not None:
            try:
                return inherited(self, name)
            except AttributeError:
                pass
        if name.startswith("_"):
            raise AttributeError(name)
        value = context.for_name(name)
        object.__setattr__(self, name, value) if not isinstance(self, nn.Module) else setattr(self, name, value)
        return value

    cls.__getattr__ = fallback


def _is_local(value: Any, namespace: dict[str, Any]) -> bool:
    value = inspect.unwrap(value)
    return getattr(value, "__module__", None) == namespace["__name__"] and getattr(
        getattr(value, "__code__", None), "co_filename", None) == EXAMPLE_FILE


def run_source(source: str, dtype: torch.dtype, profile: Profile, also_free: tuple[str, ...] = (),
               driver: str | None = None, trace: bool = True) -> Run:
    """Executes a snippet and drives everything it defines; what it leaves behind is in the Run.
    A name the snippet reads before binding it (`model = accelerator.prepare(model)`) is synthesized
    too, on a second try."""
    run = _run_once(source, dtype, profile, also_free, driver, trace)
    for error in run.errors.values():
        missing = re.match(r"NameError: name '(\w+)' is not defined", error)
        if missing and missing.group(1) not in also_free and len(also_free) < 5:
            return run_source(source, dtype, profile, (*also_free, missing.group(1)), driver, trace)
    return run


@contextlib.contextmanager
def _loaders_in_process():
    """DataLoaders load in this process while a snippet runs (`num_workers=0`, the before and the after
    alike): a worker forked from a test process that runs threads (pytest-xdist's) can deadlock, and the
    number of loading processes changes no value this harness compares (SF206's fix changes only that,
    and it is unsafe)."""
    loader = torch.utils.data.DataLoader
    original = loader.__init__

    def in_process(self, *args, **kwargs):
        bound = inspect.signature(original).bind(self, *args, **kwargs)
        bound.arguments["num_workers"] = 0
        for needs_workers in ("persistent_workers", "prefetch_factor"):
            bound.arguments.pop(needs_workers, None)
        original(*bound.args, **bound.kwargs)

    loader.__init__ = in_process
    try:
        yield
    finally:
        loader.__init__ = original


def _run_once(source: str, dtype: torch.dtype, profile: Profile, also_free: tuple[str, ...],
              driver: str | None, trace: bool) -> Run:
    run = Run()
    tree = ast.parse(source)
    code = compile(tree, EXAMPLE_FILE, "exec")
    holder: dict[str, Context] = {}
    finder = _StubFinder(lambda: holder["context"])
    modules_before = set(sys.modules)
    default_dtype = torch.get_default_dtype()
    stdout = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="stabfix-diff-") as folder:
        context = Context(dtype, profile, Path(folder))
        _RUN_FOLDER[0] = folder
        holder["context"] = context
        context.called = _called_names(tree)
        context.loaded = _loaded_names(tree)
        for name in _loaded_files(tree):
            (Path(folder) / name).parent.mkdir(parents=True, exist_ok=True)
            context.checkpoint_file(Path(folder) / name)
        torch.manual_seed(0)
        random.seed(0)
        namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(Path(folder) / "example.py")}
        sys.meta_path.insert(0, finder)
        torch.set_default_dtype(dtype)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny tensors: a thread pool only waits (bfloat16 linear: 4.5 ms on 2, 0.09 ms on 1)
        previous_trace = sys.gettrace()
        cwd = os.getcwd()
        os.chdir(folder)  # a relative path the snippet reads or writes is in the run's folder
        try:
            with cuda_on_cpu(), _loaders_in_process(), contextlib.redirect_stdout(stdout), _quiet_warnings():
                for name in (*_free_names(tree), *also_free):
                    namespace[name] = _free_value(name, tree, context)
                if trace:  # lines are traced where reach is decided (float32); the other dtypes rerun that
                    sys.settrace(_tracer(run.executed, run.raised))
                try:
                    exec(code, namespace)  # noqa: S102 - the point of the harness
                except _Budget as exc:
                    run.errors["module"] = f"stopped: {exc}"
                except BaseException as exc:  # noqa: BLE001 - a snippet may raise anything
                    run.errors["module"] = _describe(exc)
                else:
                    run.calls_ok += 1
                if driver is None:
                    _drive(tree, namespace, context, run)
                else:
                    _run_driver(driver, namespace, context, run)
                sys.settrace(previous_trace)
                _observe_state(namespace, context, run, Path(folder))
        finally:
            os.chdir(cwd)
            sys.settrace(previous_trace)
            torch.set_default_dtype(default_dtype)
            torch.set_num_threads(threads)
            sys.meta_path.remove(finder)
            for name in set(sys.modules) - modules_before:
                if isinstance(sys.modules[name], _StubModule):
                    del sys.modules[name]
        run.observations["stdout"] = ("text", _normalise_stdout(stdout.getvalue(), folder))
        _RUN_FOLDER[0] = ""
    return run


def _normalise_stdout(text: str, folder: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x…", text.replace(folder, "<tmp>"))


@contextlib.contextmanager
def _quiet_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _free_value(name: str, tree: ast.Module, context: Context) -> Any:
    called = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                 for node in ast.walk(tree))
    if called and not MODEL_NAMES.search(name.lower()) and not CRITERION_NAMES.search(name.lower()):
        # a helper the snippet calls but does not define (`load_image_encoder()`): it makes a model
        return lambda *args, **kwargs: context.model()
    return context.for_name(name)


def _describe(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:160]}"


def _call(run: Run, where: str, function: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        result = function(*args, **kwargs)
    except _Budget as exc:
        run.errors[where] = f"stopped: {exc}"
        return None
    except BaseException as exc:  # noqa: BLE001
        run.errors[where] = _describe(exc)
        run.observations[where] = ("raised", type(exc).__name__)
        return None
    run.calls_ok += 1
    if isinstance(result, torch.Tensor) and result.requires_grad and result.grad_fn is not None:
        # the caller of a function that returns a graph may differentiate it: do, so gradients are compared
        with contextlib.suppress(RuntimeError):  # a graph already freed by the snippet's own backward
            result.float().sum().backward(retain_graph=True)
    run.note(where, result)
    return result


def _drive(tree: ast.Module, namespace: dict[str, Any], context: Context, run: Run) -> None:
    tracer = sys.gettrace()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in namespace:
            function = namespace[node.name]
            if not callable(function):
                continue
            arguments = _arguments(function, context, skip_first=_first_is_self(node))
            if _first_is_self(node):
                arguments[0].insert(0, _instance_for_function(context))
            result = _call(run, f"{node.name}()", function, *arguments)
            if callable(result) and _is_local(result, namespace):
                inner = _arguments(result, context, skip_first=False)
                _call(run, f"{node.name}() returned function", result, *inner)
        elif isinstance(node, ast.ClassDef) and node.name in namespace:
            _drive_class(node, namespace[node.name], context, run)
        sys.settrace(tracer)


def _self_attributes(node: ast.ClassDef) -> list[str]:
    names = [child.attr for child in ast.walk(node) if isinstance(child, ast.Attribute)
             and isinstance(child.value, ast.Name) and child.value.id == "self" and not child.attr.startswith("_")]
    return list(dict.fromkeys(names))


def _run_driver(driver: str, namespace: dict[str, Any], context: Context, run: Run) -> None:
    """The example's own `run:` lines: they see the module's names and `harness` (the Context: model(),
    optimizer(), floats(), x(), y(), batch(), loader(), folder, namespace(...))."""
    namespace["harness"] = context
    try:
        exec(compile(driver, "<stabfix-driver>", "exec"), namespace)  # noqa: S102
    except _Budget as exc:
        run.errors["run"] = f"stopped: {exc}"
    except BaseException as exc:  # noqa: BLE001
        run.errors["run"] = _describe(exc)
        run.observations["run"] = ("raised", type(exc).__name__)
    else:
        run.calls_ok += 1
    del namespace["harness"]


def _first_is_self(node: ast.FunctionDef) -> bool:
    return bool(node.args.args) and node.args.args[0].arg == "self"


def _instance_for_function(context: Context) -> Any:
    """`def training_step(self, batch, ...)` written at module level: self is an object whose attributes
    are synthesized by name."""
    holder = type("SelfHolder", (), {})
    _synthesize_attributes(holder, context)
    return holder()


def _drive_class(node: ast.ClassDef, cls: Any, context: Context, run: Run) -> None:
    if not isinstance(cls, type):
        return
    _synthesize_attributes(cls, context)
    init = cls.__dict__.get("__init__")
    args, kwargs = _arguments(init, context, skip_first=True) if init else ([], {})
    try:
        instance = cls(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001
        run.errors[f"{node.name}()"] = _describe(exc)
        run.observations[f"{node.name}()"] = ("raised", type(exc).__name__)
        return
    run.calls_ok += 1
    # models the class only reaches through `self.net(...)` exist before any method (configure_optimizers) runs
    for name in _self_attributes(node):
        if MODEL_NAMES.search(name.lower()) or name.lower() in context.called:
            with contextlib.suppress(Exception):
                getattr(instance, name)
    for item in node.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if item.name.startswith("__") and item.name != "__call__":
            continue
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "property") for d in item.decorator_list):
            continue
        method = getattr(instance, item.name, None)
        if not callable(method):
            continue
        method_args, method_kwargs = _arguments(method, context, skip_first=False)
        _call(run, f"{node.name}.{item.name}()", method, method_args, method_kwargs)
    for key, value in sorted(vars(instance).items()):
        if not key.startswith("_") or key in ("_store", "_embeds", "_cache"):
            run.note(f"{node.name} instance .{key}", value)


def _observe_state(namespace: dict[str, Any], context: Context, run: Run, folder: Path) -> None:
    for name, value in namespace.items():
        if name.startswith("__") or isinstance(value, (types.ModuleType, type)) or callable(value):
            continue
        run.note(f"global {name}", value)
    for index, model in enumerate(context.models):
        for name, parameter in model.named_parameters():
            run.note(f"model {index} {name}", parameter)
            run.note(f"model {index} {name}.grad", parameter.grad)
        run.note(f"model {index} training", model.training)
    for index, optimizer in enumerate(context.optimizers):
        run.note(f"optimizer {index} state", [optimizer.state.get(p, {}) for group in optimizer.param_groups
                                              for p in group["params"]])
    for path in sorted(folder.rglob("*")):
        if path.is_dir() or (path.parent == folder and path.name.startswith("input-") and path.suffix == ".pt"):
            continue
        try:
            run.note(f"file {path.relative_to(folder)}", torch.load(path, weights_only=False))
        except Exception:  # noqa: BLE001 - not a torch file: its bytes are what it is
            run.note(f"file {path.relative_to(folder)}", path.read_bytes().decode("latin-1"))


# --------------------------------------------------------------------------------------------------
# comparing two runs


@dataclass
class Difference:
    where: str
    kind: str  # value, dtype, shape, type, requires_grad, raised, missing, text
    detail: str
    size: float = 0.0  # for values: the largest difference, relative to max(|before|, 1)


def compare(before: Run, after: Run) -> list[Difference]:
    differences: list[Difference] = []
    for where in sorted(set(before.observations) | set(after.observations)):
        a, b = before.observations.get(where, ("missing",)), after.observations.get(where, ("missing",))
        _compare(where, a, b, differences)
    return differences


def _compare(where: str, a: Any, b: Any, out: list[Difference]) -> None:
    if a == b:
        return
    kind_a, kind_b = a[0], b[0]
    if kind_a == "missing" or kind_b == "missing":
        out.append(Difference(where, "missing", f"{_short(a)} -> {_short(b)}"))
        return
    if kind_a == "raised" or kind_b == "raised":
        out.append(Difference(where, "raised" if kind_b == "raised" and kind_a != "raised" else "type",
                              f"{_short(a)} -> {_short(b)}"))
        return
    if where.endswith(".grad") and "atom" in (kind_a, kind_b):
        out.append(Difference(where, "gradient", f"{_short(a)} -> {_short(b)}"))
        return
    if kind_a == kind_b == "text":
        lines_a, lines_b = a[1].splitlines(), b[1].splitlines()
        first = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y), min(len(lines_a), len(lines_b)))
        line_a = lines_a[first] if first < len(lines_a) else "<end>"
        line_b = lines_b[first] if first < len(lines_b) else "<end>"
        out.append(Difference(where, "printed", f"{line_a[:60]!r} -> {line_b[:60]!r}"))
        return
    if kind_a == kind_b == "atom":
        out.append(Difference(where, "state", f"{a[1]!r} -> {b[1]!r}"[:120]))
        return
    if kind_a == "tensor" and kind_b == "tensor":
        _, dtype_a, shape_a, grad_a, values_a = a
        _, dtype_b, shape_b, grad_b, values_b = b
        if dtype_a != dtype_b:
            out.append(Difference(where, "dtype", f"{dtype_a} -> {dtype_b}"))
        if shape_a != shape_b:
            out.append(Difference(where, "shape", f"{shape_a} -> {shape_b}"))
            return
        if grad_a != grad_b:
            out.append(Difference(where, "requires_grad", f"{grad_a} -> {grad_b}"))
        size = _largest(values_a, values_b)
        if size:
            out.append(Difference(where, "value", f"differs by {size:.3g} (relative)", size))
        return
    if kind_a == "number" and kind_b == "number":
        if a[1] != b[1]:
            out.append(Difference(where, "type", f"{a[1]} -> {b[1]}"))
        size = _largest((a[2],), (b[2],))
        if size:
            out.append(Difference(where, "value", f"differs by {size:.3g} (relative)", size))
        return
    if {kind_a, kind_b} <= {"tensor", "number"}:
        value_a = a[4] if kind_a == "tensor" else (a[2],)
        value_b = b[4] if kind_b == "tensor" else (b[2],)
        out.append(Difference(where, "type", f"{_short(a)} -> {_short(b)}"))
        if len(value_a) == len(value_b):
            size = _largest(value_a, value_b)
            if size:
                out.append(Difference(where, "value", f"differs by {size:.3g} (relative)", size))
        return
    if kind_a == kind_b and kind_a in ("list", "tuple") and len(a[1]) == len(b[1]):
        for index, (item_a, item_b) in enumerate(zip(a[1], b[1])):
            _compare(f"{where}[{index}]", item_a, item_b, out)
        return
    if kind_a == kind_b == "dict" and [k for k, _ in a[1]] == [k for k, _ in b[1]]:
        for (key, item_a), (_, item_b) in zip(a[1], b[1]):
            _compare(f"{where}[{key}]", item_a, item_b, out)
        return
    out.append(Difference(where, "text" if kind_a == "text" else "type", f"{_short(a)} -> {_short(b)}"))


def _largest(values_a: tuple[float, ...], values_b: tuple[float, ...]) -> float:
    largest = 0.0
    for x, y in zip(values_a, values_b):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
            return math.inf
        largest = max(largest, abs(x - y) / max(abs(x), 1.0))
    return largest


def _short(value: Any) -> str:
    if value[0] == "tensor":
        return f"tensor({value[1].replace('torch.', '')}, shape {list(value[2])})"
    if value[0] == "number":
        return value[1]
    if value[0] == "atom":
        return repr(value[1])[:40]
    if value[0] == "text":
        return "printed text"
    if value[0] == "raised":
        return f"raises {value[1]}"
    return value[0]


# --------------------------------------------------------------------------------------------------
# one fix, judged


@dataclass
class Verdict:
    code: str
    index: int
    name: str
    safety: str  # what the finding's fix says: safe or unsafe
    status: str  # equal, same-program, within-bound, differs, broken, not-runnable
    reason: str = ""
    differences: dict[str, list[Difference]] = field(default_factory=dict)  # dtype -> differences
    profile: str = ""

    def graph_only(self) -> bool:
        """Only `requires_grad` of some tensor changed: the fix cuts a graph nothing differentiates."""
        return all(d.kind == "requires_grad" for ds in self.differences.values() for d in ds)

    def summary(self) -> str:
        if self.status in ("not-runnable", "same-program"):
            return self.reason
        parts = []
        first: Difference | None = None
        for dtype, differences in self.differences.items():
            if not differences:
                parts.append(f"{dtype}: equal")
                continue
            first = first or next((d for d in differences if d.kind != "requires_grad"), differences[0])
            kinds = sorted({d.kind for d in differences})
            values = [d.size for d in differences if d.kind == "value"]
            text = ", ".join(kinds)
            if values:
                text += f" (up to {max(values):.2g} relative)"
            parts.append(f"{dtype}: {text}")
        if first is None:
            return "equal in all three dtypes"
        return "; ".join(parts) + f". E.g. `{first.where}`: {first.detail}"


def changed_hunks(before: str, after: str) -> tuple[list[list[int]], list[list[int]]]:
    """The fix's hunks as 1-based line numbers: what it replaced or removed (before), what it wrote (after)."""
    old, new = before.splitlines(), after.splitlines()
    removed: list[list[int]] = []
    added: list[list[int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed.append(list(range(i1 + 1, i2 + 1)))
        if tag in ("replace", "insert"):
            added.append(list(range(j1 + 1, j2 + 1)))
    return removed, added


def _statement_starts(source: str) -> dict[int, set[int]]:
    """For every line: the lines whose execution proves it ran (the first lines of its innermost
    statement; a decorator's def). A line in no statement (a comment, a blank) maps to nothing."""
    tree = ast.parse(source)
    spans: list[tuple[int, int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start = node.lineno
            decorators = getattr(node, "decorator_list", [])
            if decorators:
                start = min(d.lineno for d in decorators)
            body_start = node.body[0].lineno if hasattr(node, "body") and node.body else node.end_lineno + 1
            spans.append((start, node.end_lineno, body_start))
    mapping: dict[int, set[int]] = {}
    for line in range(1, len(source.splitlines()) + 1):
        covering = [span for span in spans if span[0] <= line <= span[1]]
        if not covering:
            continue
        start, end, body_start = min(covering, key=lambda span: span[1] - span[0])
        if start <= line < body_start or line > end:
            mapping[line] = set(range(start, min(body_start, end + 1)))
        else:
            mapping[line] = set(range(start, end + 1))
    return mapping


def unreached(source: str, hunks: list[list[int]], run: Run, raising_counts: bool = True) -> list[int]:
    """The first line of every hunk none of whose code lines ran, or (raising_counts) one of whose
    statements raised (a gate the fix adds counts as reached when its test ran, even if its body did
    not on these inputs). The fixed side's raising is not "unreached": it is the fix breaking the program."""
    executed = run.executed
    starts = _statement_starts(source)
    source_lines = source.splitlines()
    missing = []
    for hunk in hunks:
        code_lines = [line for line in hunk if line in starts and line <= len(source_lines)
                      and source_lines[line - 1].strip() and not source_lines[line - 1].strip().startswith("#")]
        if code_lines and (not any(starts[line] & executed for line in code_lines)
                           or (raising_counts and any(starts[line] & run.raised for line in code_lines))):
            missing.append(code_lines[0])
    return missing


def same_program(before: str, after: str) -> bool:
    return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))


def judge(code: str, index: int, name: str, before: str, after: str, safety: str,
          bound_ulps: float | None = None, dtypes: dict[str, torch.dtype] = DTYPES,
          driver: str | None = None) -> Verdict:
    verdict = Verdict(code, index, name, safety, status="equal")
    if same_program(before, after):
        verdict.status, verdict.reason = "same-program", "same program (the fix changes comments only)"
        return verdict
    removed, added = changed_hunks(before, after)
    best: tuple[Profile, Run, Run] | None = None
    best_score = None
    for profile in PROFILES:
        original = run_source(before, torch.float32, profile, driver=driver)
        missing = unreached(before, removed, original)
        if missing and best is not None:
            continue  # the fixed program is only run once the original reaches what the fix changes
        fixed = run_source(after, torch.float32, profile, driver=driver)
        missing += unreached(after, added, fixed, raising_counts=False)
        score = (not missing, original.calls_ok)
        if best_score is None or score > best_score:
            best, best_score = (profile, original, fixed), score
        if not missing:
            break
    assert best is not None
    profile, original, fixed = best
    verdict.profile = profile.label()
    missing_before = unreached(before, removed, original)
    missing_after = unreached(after, added, fixed, raising_counts=False)
    if missing_before or missing_after:
        first_error = next(iter(original.errors.items()), None)
        why = f"{first_error[0]} raised {first_error[1]}" if first_error else "the driver never reaches it"
        where = ", ".join(map(str, missing_before)) or "new " + ", ".join(map(str, missing_after))
        verdict.status, verdict.reason = "not-runnable", f"changed line {where} not run through: {why}"
        return verdict
    for label, dtype in dtypes.items():
        if dtype is torch.float32:
            run_a, run_b = original, fixed
        else:
            run_a = run_source(before, dtype, profile, driver=driver, trace=False)
            run_b = run_source(after, dtype, profile, driver=driver, trace=False)
        verdict.differences[label] = compare(run_a, run_b)
    everything = [d for ds in verdict.differences.values() for d in ds]
    if any(d.kind == "raised" for d in everything):
        verdict.status = "broken"  # the fixed program raises where the original did not
    elif not everything:
        verdict.status = "equal"
    elif bound_ulps is not None and all(
        d.kind == "value" and d.size <= bound_ulps * torch.finfo(dtypes[label]).eps
        for label, ds in verdict.differences.items() for d in ds
    ):
        verdict.status = "within-bound"
    else:
        verdict.status = "differs"
    return verdict


# --------------------------------------------------------------------------------------------------
# every fix of the catalog


def fix_safety_of(code: str, source: str) -> str:
    """The safety the findings' own fixes declare ("unsafe" if any applied fix is)."""
    from stabfix.engine import analyse_text

    catalog, classes = _catalog_and_classes(code, source)
    analysis = analyse_text(source, "example.py", classes, catalog)
    safeties = {item.fix.safety for item in analysis.findings if item.fix is not None}
    return "unsafe" if "unsafe" in safeties else "safe"


def _catalog_and_classes(code: str, source: str):
    from stabfix.catalog import load_catalog
    from stabfix.checkers import checker_classes

    catalog, checkers = load_catalog(), checker_classes()
    if not checkers[code].meta:
        return catalog, [checkers[code]]
    named = [other for other, spec in catalog.items() if other in source or spec.name in source]
    return catalog, [checkers[other] for other in sorted({*named, code})]


def fixed_source(code: str, source: str) -> str:
    from stabfix.fixer import fix_text

    catalog, classes = _catalog_and_classes(code, source)
    return fix_text(source, "example.py", classes, catalog, unsafe=True).text


def fixable_examples():
    """(code, index, example) for every bad example that has a fix."""
    from stabfix.catalog import load_catalog

    for code, spec in load_catalog().items():
        for index, example in enumerate(spec.bad):
            if example.fixed:
                yield code, index, example


def judge_example(code: str, index: int, example: Any) -> Verdict:
    from stabfix.catalog import load_catalog

    spec = load_catalog()[code]
    after = fixed_source(code, example.code)
    safety = fix_safety_of(code, example.code)
    return judge(code, index, example.name, example.code, after, safety, spec.fix_bound_ulps, driver=example.run)


# --------------------------------------------------------------------------------------------------
# the table in bench/README.md

TABLE_BEGIN = "<!-- fix-differential: begin (generated by `python tests/differential.py --table`) -->"
TABLE_END = "<!-- fix-differential: end -->"


# fixes that only move tensors between devices: on the CPU every device is the CPU
DEVICE_ONLY = {"SF102": "moves cache entries to the CPU and back", "SF107": "adds map_location=\"cpu\"",
               "SF205": "passes the move's device to the factory", "SF416": "keeps the moved tensor"}


def outcome(verdict: Verdict) -> str:
    if verdict.status == "not-runnable":
        return "not runnable"
    if verdict.code in DEVICE_ONLY and verdict.status in ("equal", "within-bound"):
        return f"{verdict.safety}: values equal, device placement not observable on CPU"
    proven = verdict.status in ("equal", "same-program", "within-bound") or (
        verdict.status == "differs" and verdict.graph_only())
    if verdict.status == "broken":
        return "**breaks the program**"
    if verdict.safety == "safe":
        return "proven safe" if proven else "**labelled safe, changes what the program observes**"
    return "unsafe, no difference on these inputs" if proven else "unsafe, difference shown"


def table(verdicts: list[Verdict]) -> str:
    lines = [
        TABLE_BEGIN,
        "",
        "| rule | bad example | fix | outcome | float32 / bfloat16 / float16: what the fix changes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for verdict in verdicts:
        name = verdict.name.replace("|", "\\|")
        if len(name) > 70:
            name = name[:67] + "..."
        summary = verdict.summary().replace("|", "\\|")
        lines.append(f"| {verdict.code} | {verdict.index}: {name} | {verdict.safety} | {outcome(verdict)} | "
                     f"{summary.replace(chr(10), ' ')} |")
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[outcome(verdict)] = counts.get(outcome(verdict), 0) + 1
    lines += ["", "Totals: " + ", ".join(f"{label} {count}" for label, count in sorted(counts.items())) + ".", "",
              TABLE_END]
    return "\n".join(lines)


def write_table(readme: Path, verdicts: list[Verdict]) -> None:
    text = readme.read_text(encoding="utf-8")
    section = table(verdicts)
    if TABLE_BEGIN in text and TABLE_END in text:
        head, _, rest = text.partition(TABLE_BEGIN)
        _, _, tail = rest.partition(TABLE_END)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    readme.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    verdicts = [judge_example(code, index, example) for code, index, example in fixable_examples()]
    if "--table" in argv:
        write_table(Path(__file__).resolve().parent.parent / "bench" / "README.md", verdicts)
    for verdict in verdicts:
        print(f"{verdict.code} {verdict.index:>2} {verdict.safety:<6} {verdict.status:<13} {verdict.summary()[:150]}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main(sys.argv[1:]))
