"""The node-free facts a function summary holds (`summaries.py` builds them; see its docstring for what
each field means). A `FunctionSummary` reads its two halves on demand: what the function returns
(`ReturnFacts`, built by `returns.py`) and what it does (`EffectFacts`, built by `effects.py`), so a
question about effects never pays for returns, nor the other way round; and, apart from the returns it
reads, the parameters whose gradient it never reads (`UnreadFacts`, built by `grad_unread.py`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Callable, Optional, Protocol, TypeVar, Union

if TYPE_CHECKING:
    import libcst as cst

    from stabfix.model.flow.callers import Callers

T = TypeVar("T")


@dataclass(frozen=True)
class ValueFacts:
    requires_grad: Optional[bool] = None
    history: Optional[bool] = None
    detached: Optional[bool] = None
    device: Optional[str] = None  # "accelerator" | "host"
    activation: Optional[str] = None  # "softmax" | "log_softmax" | "sigmoid" | "logits"
    role: Optional[str] = None  # "model_output" | "loss" | "batch" | "lr_scheduler"
    # the positional parameter this element hands back, through operations that keep requires-grad
    # (`return x.view(n, -1), y.float()`): the caller's argument comes back as this element
    parameter: Optional[str] = None
    # a tensor built in host memory by torch factories and arithmetic, no `device=` (`flow/host_tensors.py`)
    host_built: Optional[bool] = None

    @staticmethod
    def join(facts: list["ValueFacts"]) -> "ValueFacts":
        """What holds whichever of these values it is: a field all of them agree on, else unknown."""
        if not facts:
            return ValueFacts()
        agreed = {}
        for item in fields(ValueFacts):
            seen = {getattr(fact, item.name) for fact in facts}
            agreed[item.name] = seen.pop() if len(seen) == 1 else None
        return ValueFacts(**agreed)

    @property
    def made_to_require_grad(self) -> bool:
        """A leaf made to require grad (`torch.tensor(y, requires_grad=True)`), not a computed value."""
        return self.requires_grad is True and self.history is False


LEAF_SETTER = "setter"  # a `requires_grad` effect's detail: by `t.requires_grad = True` (a leaf only)


@dataclass(frozen=True)
class Effect:
    kind: str  # eval | train | zero_grad | step | backward | unscale | clip | optimizer | no_grad | store | requires_grad
    #          | detach | collective
    target: Optional[str]  # `self.model`, a parameter's spelling; None when not nameable by the caller
    restored: bool = False  # an eval switch that a later train switch of the same module undoes
    depth: int = 0  # calls below the summarised function (0: in its own body)
    via: tuple[str, ...] = ()  # names of the functions it goes through, outermost first
    detail: Optional[str] = None  # `collective`: the collective it runs (`dist.barrier`); `requires_grad`: LEAF_SETTER


@dataclass(frozen=True)
class ReturnFacts:
    """The returns half of a summary."""

    returns: tuple[ValueFacts, ...] = ()
    return_depth: int = 0  # the deepest call level its return facts rely on
    converged: bool = True  # False when recursion did not settle within MAX_ROUNDS
    # where the returns differ in length (`return x` in one branch, `return x, y` in another): per length, what the
    # returns of that length hold element by element (a caller that unpacks n names receives only those)
    by_length: tuple[tuple[ValueFacts, ...], ...] = ()


@dataclass(frozen=True)
class UnreadFacts:
    """The parameters whose gradient it never reads (`grad_unread.py`), built apart from the returns."""

    grad_unread: tuple[str, ...] = ()
    converged: bool = True


@dataclass(frozen=True)
class EffectFacts:
    """The effects half of a summary."""

    effects: tuple[Effect, ...] = ()
    converged: bool = True


class FunctionSummary:
    """One function's summary: its name and signature, and its halves (and its unread parameters) read on
    demand (each from its own builder, which memoises it), or given outright
    (`FunctionSummary("f", ("x",), None, returns=...)`)."""

    __slots__ = ("name", "parameters", "receiver", "_return_facts", "_effect_facts", "_unread_facts")

    def __init__(self, name: str, parameters: tuple[str, ...], receiver: Optional[str],
                 returns: tuple[ValueFacts, ...] = (), effects: tuple[Effect, ...] = (), return_depth: int = 0,
                 grad_unread: tuple[str, ...] = (), converged: bool = True, *,
                 return_facts: Optional[Callable[[], ReturnFacts]] = None,
                 effect_facts: Optional[Callable[[], EffectFacts]] = None,
                 unread_facts: Optional[Callable[[], UnreadFacts]] = None) -> None:
        self.name = name  # `evaluate`, `Runner.evaluate`
        self.parameters = parameters  # positional parameters, the receiver (`self`) left out
        self.receiver = receiver  # a method's first parameter (`self`), None for a function
        if return_facts is None:
            given_returns = ReturnFacts(returns, return_depth, converged)
            return_facts = lambda: given_returns  # noqa: E731
        if effect_facts is None:
            given_effects = EffectFacts(effects, converged)
            effect_facts = lambda: given_effects  # noqa: E731
        if unread_facts is None:
            given_unread = UnreadFacts(grad_unread, converged)
            unread_facts = lambda: given_unread  # noqa: E731
        self._return_facts = return_facts
        self._effect_facts = effect_facts
        self._unread_facts = unread_facts

    def return_facts(self) -> ReturnFacts:
        return self._return_facts()

    def effect_facts(self) -> EffectFacts:
        return self._effect_facts()

    def unread_facts(self) -> UnreadFacts:
        return self._unread_facts()

    @property
    def returns(self) -> tuple[ValueFacts, ...]:
        return self._return_facts().returns

    @property
    def return_depth(self) -> int:
        return self._return_facts().return_depth

    @property
    def grad_unread(self) -> tuple[str, ...]:
        return self._unread_facts().grad_unread

    @property
    def effects(self) -> tuple[Effect, ...]:
        return self._effect_facts().effects

    @property
    def converged(self) -> bool:
        return self._return_facts().converged and self._unread_facts().converged and self._effect_facts().converged

    def effects_of(self, *kinds: str) -> list[Effect]:
        return [effect for effect in self.effects if effect.kind in kinds]

    @property
    def returned(self) -> Optional[ValueFacts]:
        """What it returns when it returns one value (not a tuple)."""
        return self.returns[0] if len(self.returns) == 1 else None

    def guarded(self) -> "FunctionSummary":
        """This summary with each half read at most once, and a half that fails to build (a part of
        another file's model failing on a question) read as unknown: what another file is handed."""
        return FunctionSummary(self.name, self.parameters, self.receiver,
                               return_facts=_once(self._return_facts, ReturnFacts()),
                               effect_facts=_once(self._effect_facts, EffectFacts()),
                               unread_facts=_once(self._unread_facts, UnreadFacts()))

    def __reduce__(self) -> tuple:  # picklable: every half built and kept as it is
        return (_given, (self.name, self.parameters, self.receiver, self._return_facts(), self._effect_facts(),
                         self._unread_facts()))

    def _key(self) -> tuple:
        return (self.name, self.parameters, self.receiver, self._return_facts(), self._effect_facts(), self._unread_facts())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionSummary) and self._key() == other._key()

    def __hash__(self) -> int:  # as a frozen dataclass of these fields hashes
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"FunctionSummary(name={self.name!r}, parameters={self.parameters!r}, receiver={self.receiver!r}, "
                f"returns={self.returns!r}, effects={self.effects!r}, return_depth={self.return_depth!r}, "
                f"grad_unread={self.grad_unread!r}, converged={self.converged!r})")


def _given(name: str, parameters: tuple[str, ...], receiver: Optional[str], returned: ReturnFacts,
           done: EffectFacts, unread: UnreadFacts) -> FunctionSummary:
    return FunctionSummary(name, parameters, receiver, return_facts=lambda: returned, effect_facts=lambda: done,
                           unread_facts=lambda: unread)


def _once(read: Callable[[], T], unknown: T) -> Callable[[], T]:
    kept: list[T] = []

    def load() -> T:
        if not kept:
            try:
                kept.append(read())
            except (RecursionError, MemoryError):
                kept.append(unknown)
            except Exception:  # another file's part failed on the question: unknown there, not an error here
                kept.append(unknown)
        return kept[0]

    return load


@dataclass(frozen=True)
class ClassSummary:
    name: str
    bases: tuple[str, ...]  # as spelled or qualified through the imports (`torch.nn.Module`)
    methods: tuple[tuple[str, FunctionSummary], ...] = ()

    def method(self, name: str) -> Optional[FunctionSummary]:
        return next((summary for found, summary in self.methods if found == name), None)


Summary = Union[FunctionSummary, ClassSummary]


class CallSummaries(Protocol):
    """What the two halves (`returns.py`, `effects.py`) ask of `summaries.py`: what a call runs."""

    callers: "Callers"

    def function_of_call(self, call: "cst.Call") -> Optional[FunctionSummary]: ...

    def running(self, call: "cst.Call") -> Optional[FunctionSummary]: ...

    def of_call(self, call: "cst.Call") -> Optional["Summary"]: ...

    def summarised(self, call: "cst.Call") -> bool: ...

    def single_value(self, expr: "cst.BaseExpression") -> Optional["cst.BaseExpression"]: ...

    def returned_facts(self, call: "cst.Call") -> Optional[tuple[ValueFacts, ...]]: ...
