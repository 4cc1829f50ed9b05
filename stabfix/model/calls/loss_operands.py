"""What a loss is made of: the tensor operands of a loss call (`operand_positions`, prediction first;
`is_meta_operand` for lengths, masks, weights), what both operands apply alike (`peel_common`), and
the calls summed into a loss value (`loss_term_calls`: through arithmetic, reductions and bindings).
Used by the `tensors` part (`tensor_identity.py`) and SF401.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst

from stabfix.model.calls.loss_sources import LossCall, identifier_words, is_loss_like_name
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import node_code

Qualify = Callable[[cst.BaseExpression], Optional[str]]

# `True`/`False`/`None` parse as names but are constants: nothing can bind them, and no tensor is one.
_CONSTANT_NAMES = frozenset({"True", "False", "None"})


def root_name_node(expr: cst.BaseExpression) -> cst.Name | None:
    while True:
        kind = type(expr)  # exact types (libcst has no subclass of them): asked of every operand, every key
        if kind is cst.Name:
            return None if expr.value in _CONSTANT_NAMES else expr  # type: ignore[attr-defined,return-value]
        if kind is cst.Attribute or kind is cst.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif kind is cst.Call and type(expr.func) is cst.Attribute:  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        else:
            return None


def root_name(expr: cst.BaseExpression) -> str | None:
    root = root_name_node(expr)
    return root.value if root is not None else None


# --- which calls are losses ---------------------------------------------------------------------

# Tensor operands of library losses, by position and keyword (the rest are labels, weights, lengths).
_LIBRARY_OPERANDS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "triplet_margin_loss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "TripletMarginLoss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "TripletMarginWithDistanceLoss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "margin_ranking_loss": ((0, 1), ("input1", "input2")),
    "MarginRankingLoss": ((0, 1), ("input1", "input2")),
    "cosine_embedding_loss": ((0, 1), ("input1", "input2")),
    "CosineEmbeddingLoss": ((0, 1), ("input1", "input2")),
}
_DEFAULT_LIBRARY_OPERANDS = ((0, 1), ("input", "target", "log_probs", "targets"))




def operand_positions(loss: LossCall) -> list[tuple[str, cst.BaseExpression]]:
    """(label, expression) of the tensor operands of a loss call, prediction first."""
    call = loss.call
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if loss.library:
        last = loss.kind.rsplit(".", 1)[-1]
        positions, keywords = _LIBRARY_OPERANDS.get(last, _DEFAULT_LIBRARY_OPERANDS)
        found = [(f"#{i}", positional[i].value) for i in positions if i < len(positional)]
        found += [(arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None and arg.keyword.value in keywords]
        return found
    found = [(f"#{i}", arg.value) for i, arg in enumerate(positional)]
    for arg in call.args:
        if arg.keyword is not None and not any(w in vocab.METADATA_WORDS for w in identifier_words(arg.keyword.value)):
            found.append((arg.keyword.value, arg.value))
    return found


def is_meta_operand(expr: cst.BaseExpression) -> bool:
    """An argument that names a length, mask, weight, step... rather than a tensor to compare."""
    root = root_name(expr)
    if root is None:
        return True
    name = dotted_name(expr) or _string_index(expr) or root
    words = identifier_words(name.rsplit(".", 1)[-1])
    if not words:
        return True
    # `x_t`, `t_logits`, `model_pred` are tensors: only a name that ends in a meta word and says
    # nothing of a tensor (`t`, `mask`, `num_items`, `labels`) is taken for one
    return words[-1] in vocab.METADATA_WORDS and not any(w in vocab.TENSOR_VALUE_WORDS for w in words)


# Pairs of callees that give equal results for equal inputs (`F.kl_div(F.log_softmax(s / T), F.softmax(t / T))`).
_MATCHED_CALLEES = frozenset({frozenset({"log_softmax", "softmax"}), frozenset({"logsigmoid", "sigmoid"})})


def peel_common(a: cst.BaseExpression, b: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression]:
    """Strip what both operands of a loss apply alike, down to where they differ: `gram(vgg(out))` and
    `gram(vgg(ref))` give (`out`, `ref`); `F.log_softmax(s / T, -1)` and `F.softmax(t / T, -1)` give
    (`s`, `t`). A deterministic function of one tensor gives equal results, so if the peeled operands are
    the same tensor, so are the operands."""
    for _ in range(8):
        pair = _peel_once(a, b)
        if pair is None:
            return a, b
        a, b = pair
    return a, b


def _peel_once(a: cst.BaseExpression, b: cst.BaseExpression):
    if type(a) is cst.BinaryOperation and type(b) is cst.BinaryOperation and type(a.operator) is type(b.operator):
        if _code(a.right) == _code(b.right):
            return a.left, b.left
        return (a.right, b.right) if _code(a.left) == _code(b.left) else None
    if not (type(a) is cst.Call and type(b) is cst.Call) or len(a.args) != len(b.args):
        return None
    for x, y in zip(a.args, b.args):
        if x.star or y.star or _code(x.keyword or cst.Name("_")) != _code(y.keyword or cst.Name("_")):
            return None
    last = [_callee_word(a.func), _callee_word(b.func)]
    if not all(last) or any(set(identifier_words(w)) & vocab.RANDOM_CALL_WORDS for w in last):  # type: ignore[arg-type]
        return None
    matched = last[0] == last[1] or frozenset(last) in _MATCHED_CALLEES
    differing = [i for i, (x, y) in enumerate(zip(a.args, b.args)) if _code(x.value) != _code(y.value)]
    if type(a.func) is cst.Attribute and type(b.func) is cst.Attribute and _code(a.func.value) != _code(b.func.value):
        # methods on two receivers: `s.log_softmax(-1)` and `t.softmax(-1)`
        return (a.func.value, b.func.value) if matched and not differing else None
    if matched and _code(a.func) != _code(b.func) and not isinstance(a.func, type(b.func)):
        return None
    if (matched or _code(a.func) == _code(b.func)) and len(differing) == 1:
        return a.args[differing[0]].value, b.args[differing[0]].value
    return None


def _callee_word(func: cst.BaseExpression) -> str | None:
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else None


def _code(node: cst.CSTNode) -> str:
    return node_code(node)


def _string_index(expr: cst.BaseExpression) -> str | None:
    """The entry an index reads, `batch["style_ref"]` -> `style_ref`: the entry, not the container, says what it holds."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        index = expr.slice[0].slice.value
        if type(index) is cst.SimpleString:
            return str(index.evaluated_value)
    return None


# --- loss terms -----------------------------------------------------------------------------------

_PASS_THROUGH_METHODS = frozenset(
    {"mean", "sum", "squeeze", "float", "double", "view", "reshape", "add", "sub", "mul", "div", "clamp",
     "abs", "sqrt", "pow", "log", "exp", "to", "nan_to_num", "__add__", "__mul__"}
)
_ARITHMETIC_METHODS = frozenset({"add", "sub", "mul", "div", "__add__", "__mul__"})
_PASS_THROUGH_BUILTINS = frozenset({"sum", "abs", "float", "max", "min"})
_PASS_THROUGH_TORCH = frozenset(
    {"torch.mean", "torch.sum", "torch.stack", "torch.cat", "torch.add", "torch.mul", "torch.abs", "torch.log",
     "torch.exp", "torch.sqrt", "torch.clamp", "torch.nan_to_num"}
)


def loss_term_calls(sinks: Iterable[cst.BaseExpression], names: Names, qualify: Qualify) -> set[cst.Call]:
    """Calls whose result is a term of one of these loss values (what is backpropagated, returned from
    a loss/step function, or stored under a loss name), through arithmetic, reductions and bindings."""
    found: set[cst.Call] = set()
    seen: set[int] = set()
    for sink in sinks:
        _terms(sink, names, qualify, found, seen, depth=0)
    return found


def _terms(expr: cst.BaseExpression, names: Names, qualify: Qualify, found: set[cst.Call], seen: set[int], depth: int) -> None:
    if depth > 12 or id(expr) in seen:
        return
    seen.add(id(expr))
    nxt = depth + 1
    kind = type(expr)  # exact types (libcst has no subclass of them): no ABC isinstance per miss
    if kind is cst.BinaryOperation:
        _terms(expr.left, names, qualify, found, seen, nxt)
        _terms(expr.right, names, qualify, found, seen, nxt)
    elif kind is cst.UnaryOperation or kind is cst.Await:
        _terms(expr.expression, names, qualify, found, seen, nxt)
    elif kind is cst.IfExp:
        _terms(expr.body, names, qualify, found, seen, nxt)
        _terms(expr.orelse, names, qualify, found, seen, nxt)
    elif kind is cst.Tuple or kind is cst.List:
        for element in expr.elements:
            _terms(element.value, names, qualify, found, seen, nxt)
    elif kind is cst.Subscript:
        _terms(expr.value, names, qualify, found, seen, nxt)  # `self.energy_loss(...)["total"]`
    elif kind is cst.Name:
        for binding in names.bindings_of(expr):
            value = binding.bound_value if binding.kind != "augment" else binding.value
            if value is not None:
                _terms(value, names, qualify, found, seen, nxt)
    elif kind is cst.Call:
        func = expr.func
        qualified = qualify(func) or ""
        if type(func) is cst.Attribute and func.attr.value in _PASS_THROUGH_METHODS:
            _terms(func.value, names, qualify, found, seen, nxt)
            if func.attr.value in _ARITHMETIC_METHODS:
                for arg in expr.args:
                    _terms(arg.value, names, qualify, found, seen, nxt)
        elif (
            type(func) is cst.Name and func.value in _PASS_THROUGH_BUILTINS and not names.bindings_of(func)
        ) or qualified in _PASS_THROUGH_TORCH:
            for arg in expr.args:
                _terms(arg.value, names, qualify, found, seen, nxt)
        elif not qualified.startswith("torch.") or qualified.startswith("torch.nn.functional."):
            found.add(expr)


def backpropagated(call: cst.Call) -> cst.BaseExpression:
    """What `X.backward(...)` differentiates: `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`, `self.fabric.backward(loss)`."""
    receiver = call.func.value  # type: ignore[attr-defined]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if positional and type(receiver) is not cst.Call and not is_loss_like_name(root_name(receiver) or ""):
        return positional[0]
    return _unscaled(receiver)


def _unscaled(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`scaler.scale(loss)` -> `loss`."""
    if (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "scale"
        and expr.args
    ):
        return expr.args[0].value
    return expr
