"""Randomness and seeding: which calls of a file draw random numbers, which set a seed, and where a
run starts.

The model's `randomness` part, recorded during the traversal from `imports` and the enclosing
definitions (no other part):

- `draws()`: calls that draw from an RNG, each with what it is in words: a `torch.nn` layer whose
  weights are initialised at random (`nn.Linear(...)`, `nn.LSTM(...)`), `torch.nn.init.*`, dropout
  (`nn.Dropout`, `F.dropout`), `torch.rand*`/`normal`/`bernoulli`/`multinomial`, a tensor's
  `.normal_()`/`.uniform_()`, a shuffling loader (`DataLoader(..., shuffle=True)`, `RandomSampler`,
  `random_split`), Python's `random.*` and `numpy.random.*`;
- `seeds()`: calls that set a seed: `torch.manual_seed`, `torch.cuda.manual_seed(_all)`,
  `random.seed`, `numpy.random.seed`, Lightning's `seed_everything` (any of its packages),
  `transformers.set_seed`/`enable_full_determinism`, accelerate's `set_seed`, mmengine/mmcv's
  `set_random_seed`, a numpy or Python generator built from a seed (`np.random.default_rng(0)`,
  `random.Random(0)`), and `x.manual_seed(n)` / `x.manual_seed_all(n)` / `x.seed_everything(n)` where
  the receiver is a fact: a `torch.Generator` (or numpy/Python generator) the code builds, an object of
  the torch, numpy or `random` modules resolved through the imports (`torch.cuda.default_generators`),
  or a Lightning `Fabric`; a receiver the code shows to be something else never seeds. Where nothing
  shows what the receiver is (a parameter, an attribute no code of the file binds, a subscript) and the
  call agrees (one seed argument, a number or a name, not text or a collection), the method's name
  breaks the tie towards silence (`receiver_seeds`);
- `reached(call)`: whether the code that makes a call runs when the file runs: at module level, or in
  a top-level function or class that module-level code refers to (a call, a callback, a base class),
  or that such a function or class refers to, transitively; a decorated one counts as reached (its
  decorator may register it). A seed in a function nothing reaches seeds no run;
- `inherited_calls()`: `self.<method>(...)` calls of a method the class does not define, with the
  class's bases as its imports qualify them (the method comes from one of them);
- `within(definition, kind)`: those of one function or class (its nested code and the same-file
  functions it calls by name, two calls deep), kind "draw" or "seed";
- `project_calls()`: calls of a name imported from elsewhere (`Net()`, `utils.seed_all(1)`), with
  the qualified name, for a rule to ask the project index what that definition does (`seeding.py`
  says whether the run is seeded from these);
- `main_guard`: the module-level `if __name__ == "__main__":`, and `module_calls()`: calls that run
  at import, outside every definition (a script's own code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Binding, Names

Definition = Union[cst.FunctionDef, cst.ClassDef]

_SEED_FUNCTIONS = frozenset({
    "torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "random.seed", "numpy.random.seed", "transformers.set_seed", "transformers.enable_full_determinism",
    "transformers.trainer_utils.set_seed", "accelerate.utils.set_seed", "accelerate.utils.random.set_seed",
    "mmengine.runner.set_random_seed", "mmcv.runner.set_random_seed", "keras.utils.set_random_seed",
})
# Generators built from a seed: what they draw is reproducible (`rng = np.random.default_rng(0)`).
_SEEDED_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator",
                                "random.Random"})
_SEED_PACKAGES = ("lightning", "pytorch_lightning", "lightning_fabric")  # `seed_everything` of any of them
_SEED_METHODS = frozenset({"manual_seed", "manual_seed_all", "seed_everything"})
# Roots of the modules whose objects carry an RNG a `.manual_seed(n)` seeds (`torch.cuda.default_generators`).
_RNG_ROOTS = frozenset({"torch", "numpy", "random"})
_LITERALS = (cst.BaseNumber, cst.BaseString, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.Lambda, cst.BaseComp)
# What a seed argument cannot be: text or a collection (a `.manual_seed("...")` of some other API).
_NOT_A_SEED = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple, cst.Set, cst.Dict,
               cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)

_RANDOM_INIT_LAYERS = re.compile(
    r"^torch\.nn\.(Lazy)?(Linear|Bilinear|Conv[123]d|ConvTranspose[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN|"
    r"LSTMCell|GRUCell|RNNCell|MultiheadAttention|Transformer|TransformerEncoderLayer|TransformerDecoderLayer)$"
)
_DROPOUT = re.compile(r"^torch\.nn\.(functional\.)?(\w*[Dd]ropout\w*|dropout\w*)$")
_TORCH_DRAWS = frozenset({
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like", "torch.randn_like",
    "torch.randint_like", "torch.normal", "torch.bernoulli", "torch.multinomial", "torch.poisson",
})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_RANDOM_DATA = frozenset({"torch.utils.data.RandomSampler", "torch.utils.data.random_split"})
_TENSOR_DRAWS = frozenset({"normal_", "uniform_", "bernoulli_", "random_", "exponential_", "cauchy_", "log_normal_"})
_KNOWN_ROOTS = frozenset({"torch", "numpy", "random", "transformers", "accelerate", "lightning", "pytorch_lightning",
                          "lightning_fabric", "torchvision", "timm", "datasets", "os", "sys", "math"})


@dataclass(frozen=True, eq=False)
class RandomCall:
    node: cst.Call
    what: str  # a draw in words ("`nn.Linear` initialises its weights at random"), or the seed call's name
    owners: tuple[Definition, ...]  # enclosing functions and classes, outermost first (empty: module level)


class Randomness(cst.BatchableCSTVisitor):
    def __init__(self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Optional[Names] = None) -> None:
        super().__init__()
        self.imports = imports
        self.enclosing = enclosing
        self.names = names
        self._method_seeds: list[RandomCall] = []  # `x.manual_seed(n)`: a seed once its receiver is judged
        self._reached: Optional[set[cst.CSTNode]] = None
        self.main_guard: Optional[cst.If] = None
        self._draws: list[RandomCall] = []
        self._seeds: list[RandomCall] = []
        self._inherited: list[tuple[RandomCall, tuple[str, ...]]] = []
        self._project: list[tuple[RandomCall, str]] = []
        self._module_calls: list[cst.Call] = []
        self._local_calls: list[tuple[tuple[Definition, ...], str]] = []
        self._functions: dict[str, cst.FunctionDef] = {}  # the file's top-level functions by name

    # -- queries ---------------------------------------------------------------------------------------
    def draws(self) -> list[RandomCall]:
        return list(self._draws)

    def seeds(self) -> list[RandomCall]:
        return [call for call in self._seeds if call not in self._method_seeds or self.receiver_seeds(call.node)]

    def receiver_seeds(self, call: cst.Call) -> bool:
        """`x.manual_seed(n)`: a seed when the receiver is an RNG the code shows; when the code shows
        nothing about the receiver, only when the call agrees (one seed argument): the tie-break."""
        receiver = call.func.value if type(call.func) is cst.Attribute else None
        kind = self._rng_kind(receiver, 0) if receiver is not None else "other"
        if kind != "unknown":
            return kind == "rng"
        if len(call.args) != 1:
            return False
        (arg,) = call.args
        by_keyword = arg.keyword is None or arg.keyword.value == "seed"
        return arg.star == "" and by_keyword and not isinstance(arg.value, _NOT_A_SEED)

    def reached(self, call: RandomCall) -> bool:
        """Whether the code making the call runs when the file runs (module docstring: `reached`)."""
        if not call.owners or self.names is None:
            return True
        top = self._top_level(call.owners)
        return top is None or top in self._reached_definitions()

    def inherited_calls(self) -> list[tuple[RandomCall, tuple[str, ...]]]:
        return list(self._inherited)

    def project_calls(self) -> list[tuple[RandomCall, str]]:
        return list(self._project)

    def module_calls(self) -> list[cst.Call]:
        return list(self._module_calls)

    def within(self, definition: Definition, kind: str, depth: int = 2) -> list[RandomCall]:
        found = self._draws if kind == "draw" else self._seeds
        mine = [call for call in found if any(owner is definition for owner in call.owners)]
        if depth > 0:
            for owners, name in self._local_calls:
                callee = self._functions.get(name)
                if callee is not None and callee is not definition and any(o is definition for o in owners):
                    mine += self.within(callee, kind, depth - 1)
        return mine

    # -- traversal -------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.enclosing.enclosing_functions()[:-1] and not self.enclosing.enclosing_classes():
            self._functions.setdefault(node.name.value, node)

    def visit_If(self, node: cst.If) -> None:
        if not self._owners() and _is_main_guard(node.test):
            self.main_guard = node

    def visit_Call(self, node: cst.Call) -> None:
        owners = self._owners()
        if not owners:
            self._module_calls.append(node)
        func = node.func
        qualified = self.imports.qualify(func) or ""
        spelled = dotted_name(func) or ""
        if type(func) is cst.Name and not qualified:
            self._local_calls.append((owners, func.value))
        if self._seeds_rng(qualified, func, node):
            self._seeds.append(RandomCall(node, qualified or spelled, owners))
            return
        if type(func) is cst.Attribute and not qualified and func.attr.value in _SEED_METHODS and node.args:
            seed = RandomCall(node, spelled or func.attr.value, owners)
            self._seeds.append(seed)
            self._method_seeds.append(seed)
            return
        what = _draw(qualified, func, node)
        if what is not None:
            self._draws.append(RandomCall(node, what, owners))
            return
        if qualified and qualified.split(".", 1)[0] not in _KNOWN_ROOTS:
            self._project.append((RandomCall(node, qualified, owners), qualified))
        classes = self.enclosing.enclosing_classes()
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self" and classes:
            cls = classes[-1]
            if not any(type(item) is cst.FunctionDef and item.name.value == func.attr.value for item in cls.body.body):
                bases = tuple(q for base in cls.bases if (q := self.imports.qualify(base.value)))
                if bases:
                    self._inherited.append((RandomCall(node, spelled, owners), bases))

    def _owners(self) -> tuple[Definition, ...]:
        functions = self.enclosing.enclosing_functions()
        classes = self.enclosing.enclosing_classes()
        return (*classes, *functions)

    def _seeds_rng(self, qualified: str, func: cst.BaseExpression, node: cst.Call) -> bool:
        if qualified in _SEED_FUNCTIONS or (qualified in _SEEDED_GENERATORS and bool(node.args)):
            return True
        if qualified.endswith(".seed_everything") and qualified.split(".", 1)[0] in _SEED_PACKAGES:
            return True
        return False

    # -- what a receiver is ----------------------------------------------------------------------------
    def _rng_kind(self, expr: cst.BaseExpression, depth: int) -> str:
        """"rng" (an RNG the code shows), "other" (something the code shows is not one), "unknown"."""
        if depth > 4:
            return "unknown"
        if isinstance(expr, _LITERALS):
            return "other"
        qualified = self._qualify(expr)
        if qualified is not None:
            return _qualified_kind(qualified)
        if type(expr) is cst.Call:
            called = self._qualify(expr.func)
            if called is None:
                return self._built_here(expr, depth)
            if _builds_rng(called):
                return "rng"
            return "other" if _known_package(called) else "unknown"  # an installed package's: not shown
        bindings: list[Binding] = []
        if self.names is not None and type(expr) is cst.Name:
            bindings = self.names.reaching(expr)
        elif self.names is not None and type(expr) is cst.Attribute:
            bindings = self.names.self_attribute_bindings(expr)
        kinds = {self._binding_kind(binding, depth) for binding in bindings}
        if not kinds or "unknown" in kinds:
            return "unknown"
        return "rng" if kinds == {"rng"} else ("other" if "rng" not in kinds else "unknown")

    def _binding_kind(self, binding: Binding, depth: int) -> str:
        if binding.kind in ("def", "class"):
            return "other"
        value = binding.bound_value
        if value is None:
            return "unknown"  # a parameter, a loop variable, an unpacked element...
        return self._rng_kind(value, depth + 1)

    def _qualify(self, expr: cst.BaseExpression) -> Optional[str]:
        if self.names is not None:
            return self.names.qualify(expr)
        return self.imports.qualify(expr)

    def _built_here(self, call: cst.Call, depth: int) -> str:
        """What a call of the file's own function returns (every `return` an RNG: an RNG), or of its
        own class (its instance: not an RNG); anything else is unknown."""
        if self.names is None:
            return "unknown"
        function = self.names.definition_of(call)
        if function is not None:
            returned = self.names.returns.get(function) or [None]  # no `return`: None
            kinds = {self._rng_kind(value, depth + 1) if value is not None else "other" for value in returned}
            return kinds.pop() if len(kinds) == 1 else "unknown"
        built = self.names.instance_of(call)
        return "other" if built is not None and built.kind != "library" else "unknown"

    # -- what runs when the file runs ------------------------------------------------------------------
    def _top_level(self, owners: tuple[Definition, ...]) -> Optional[Definition]:
        """Of a call's enclosing definitions, the one defined at module level."""
        assert self.names is not None
        for owner in owners:
            scope = self.names.scopes.get(owner)
            if scope is not None and scope.parent is not None and scope.parent.parent is None:
                return owner
        return None

    def _reached_definitions(self) -> set[cst.CSTNode]:
        if self._reached is not None:
            return self._reached
        assert self.names is not None
        referred: dict[Optional[cst.CSTNode], set[str]] = {}  # top-level definition (None: module code) -> names
        for name, use in self.names.uses.items():
            if use.scope.resolving(name.value).parent is not None:
                continue  # a local name
            root = use.scope
            while root.parent is not None and root.parent.parent is not None:
                root = root.parent
            owner = root.node if root.parent is not None and type(root.node) in (cst.FunctionDef, cst.ClassDef) else None
            referred.setdefault(owner, set()).add(name.value)
        module_scope = next((scope for scope in self.names.scopes.values() if scope.parent is None), None)
        defined = {name: [b.node for b in bindings if b.kind in ("def", "class")]
                   for name, bindings in (module_scope.bindings.items() if module_scope is not None else ())}
        reached: set[cst.CSTNode] = set()
        pending = list(referred.get(None, ()))
        pending += [name for name, nodes in defined.items() if any(getattr(node, "decorators", ()) for node in nodes)]
        while pending:
            for node in defined.get(pending.pop(), ()):
                if node not in reached:
                    reached.add(node)
                    pending.extend(referred.get(node, ()))
        self._reached = reached
        return reached


def _qualified_kind(qualified: str) -> str:
    """An imported object: an RNG of torch, numpy, `random` (or a Lightning `Fabric`), else unknown."""
    if qualified.split(".", 1)[0] in _RNG_ROOTS or _is_fabric(qualified):
        return "rng"
    return "unknown"


def _known_package(qualified: str) -> bool:
    return qualified.split(".", 1)[0] in _KNOWN_ROOTS


def _builds_rng(called: str) -> bool:
    return called in ("torch.Generator", "torch._C.Generator") or called in _SEEDED_GENERATORS or _is_fabric(called)


def _is_fabric(qualified: str) -> bool:
    return qualified.split(".", 1)[0] in _SEED_PACKAGES and qualified.rsplit(".", 1)[-1] == "Fabric"


def _draw(qualified: str, func: cst.BaseExpression, node: cst.Call) -> Optional[str]:
    short = qualified.replace("torch.nn.functional.", "F.").replace("torch.nn.", "nn.")
    if _RANDOM_INIT_LAYERS.match(qualified):
        return f"`{short}` initialises its weights at random"
    if qualified.startswith("torch.nn.init.") and qualified.endswith("_") and not qualified.endswith(("zeros_", "ones_", "constant_", "eye_", "dirac_")):
        return f"`{short}` draws initial weights"
    if _DROPOUT.match(qualified):
        return f"`{short}` drops activations at random"
    if qualified in _TORCH_DRAWS:
        return f"`{qualified}` draws random numbers"
    if qualified in _LOADERS and any(a.keyword is not None and a.keyword.value == "shuffle" and _true(a.value) for a in node.args):
        return "the `DataLoader` shuffles (`shuffle=True`)"
    if qualified in _RANDOM_DATA:
        return f"`{qualified.rsplit('.', 1)[-1]}` draws a random order"
    if qualified.startswith("numpy.random.") or (qualified.startswith("random.") and qualified != "random.seed"):
        return f"`{qualified.replace('numpy.', 'np.')}` draws random numbers"
    if type(func) is cst.Attribute and not qualified and func.attr.value in _TENSOR_DRAWS:
        return f"`.{func.attr.value}()` fills a tensor at random"
    return None


def _true(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Name and value.value == "True"


def _is_main_guard(test: cst.BaseExpression) -> bool:
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    sides = {type(left), type(right)}
    if type(test.comparisons[0].operator) is not cst.Equal or sides != {cst.Name, cst.SimpleString}:
        return False
    name = left if type(left) is cst.Name else right
    text = right if type(right) is cst.SimpleString else left
    return name.value == "__name__" and text.evaluated_value == "__main__"  # type: ignore[union-attr]
