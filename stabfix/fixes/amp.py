"""Codemods for mixed precision and autograd debugging switches.

- `modern_amp_call`: a deprecated `torch.cuda.amp`/`torch.cpu.amp` call or decorator rewritten for
  `torch.amp`: the device goes first (`autocast("cuda", ...)`, `GradScaler("cuda", ...)`) or into
  `device_type=` (`custom_fwd`/`custom_bwd`), and the legacy autocast's positional arguments become
  keywords (its first parameter is `enabled`, torch.amp's is the device).
- `legacy_import_fix`: `from torch.cuda.amp import autocast, GradScaler` (or `from torch.cuda import amp`,
  `import torch.cuda.amp as amp`) rewritten to `torch.amp`, together with every use of the names it binds,
  in one fix (a half-done rewrite would call `torch.amp.autocast` without its device).
- `bfloat16_fix`: the float16 that decides an autocast's dtype replaced by `torch.bfloat16`, or
  `dtype=torch.bfloat16` added where the API's float16 default decides.
- `anomaly_gate_fix`: an anomaly-mode switch turned on only when the `DETECT_ANOMALY=1` environment
  variable is set: `set_detect_anomaly(True)` -> `set_detect_anomaly(os.environ.get("DETECT_ANOMALY") == "1")`,
  `with detect_anomaly():` -> `with set_detect_anomaly(<same test>):` (both restore the previous mode).
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from stabfix.findings import Fix
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.source.imports import ImportTracker, dotted_name

_NO_SPACE = cst.SimpleWhitespace("")
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
ANOMALY_TEST = 'os.environ.get("DETECT_ANOMALY") == "1"'
LEGACY_AUTOCAST_PARAMETERS = ("enabled", "dtype", "cache_enabled")
# The torch release that first has each `torch.amp` name: the package (with `autocast(device_type)`)
# arrived in 1.12, the device-generic GradScaler in 2.3, `custom_fwd(device_type=)` in 2.4.
TORCH_AMP_SINCE = {"autocast": (1, 12), "GradScaler": (2, 3), "custom_fwd": (2, 4), "custom_bwd": (2, 4)}
# `autocast(dtype=...)` (and so bfloat16 autocast on CUDA) arrived with torch.autocast in 1.10.
AUTOCAST_DTYPE_SINCE = (1, 10)


def torch_amp_since(names) -> tuple[int, int]:
    """The oldest torch that has every one of the given `torch.amp` names."""
    return max(TORCH_AMP_SINCE[name] for name in names)


def torch_spelling(imports: ImportTracker) -> tuple[str, tuple[str, ...]]:
    """How this file names the `torch` module (`torch`, `t`), and the import a fix must add if it has none."""
    names = sorted(local for local, qualified in imports.aliases.items() if qualified == "torch")
    if "torch" in names or not names:
        return "torch", () if names else ("torch",)
    return names[0], ()


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(_NO_SPACE, _NO_SPACE))


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Every argument but the last ends in a comma (keeping the user's own commas and comments)."""
    result = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if not last and arg.comma is cst.MaybeSentinel.DEFAULT:
            arg = arg.with_changes(comma=_COMMA)
        if last and type(arg.comma) is not cst.Comma:
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        result.append(arg)
    return result


def modern_amp_call(
    node: cst.BaseExpression, device: str, name: str, func: Optional[cst.BaseExpression] = None
) -> Optional[cst.Call]:
    """The torch.amp form of a legacy call (or bare decorator `node`); `func` replaces the callee."""
    if type(node) is cst.Call:
        call = node
    elif name in ("custom_fwd", "custom_bwd"):
        call = cst.Call(func=node)
    else:
        return None  # a bare `torch.cuda.amp.autocast` handed around: its callers pass legacy arguments
    if any(arg.star for arg in call.args):
        return None
    args = list(call.args)
    device_arg = cst.Arg(cst.SimpleString(f'"{device}"'))
    if name == "autocast":
        positional = [arg for arg in args if arg.keyword is None]
        if len(positional) > len(LEGACY_AUTOCAST_PARAMETERS):
            return None
        args = [
            arg.with_changes(keyword=cst.Name(LEGACY_AUTOCAST_PARAMETERS[index]), equal=cst.AssignEqual(_NO_SPACE, _NO_SPACE))
            if index < len(positional)
            else arg
            for index, arg in enumerate(args)
        ]
        args = [device_arg, *args]
    elif name == "GradScaler":
        args = [device_arg, *args]
    else:  # custom_fwd / custom_bwd: the device is keyword-only, after the function argument
        if any(arg.keyword is not None and arg.keyword.value == "device_type" for arg in args):
            return None
        split = sum(1 for arg in args if arg.keyword is None)
        args = [*args[:split], _keyword("device_type", cst.SimpleString(f'"{device}"')), *args[split:]]
    return call.with_changes(func=func if func is not None else call.func, args=_with_commas(args))


def legacy_import_fix(
    statement: Union[cst.Import, cst.ImportFrom],
    alias: cst.ImportAlias,
    uses: list[tuple[cst.BaseExpression, str, str]],
    description: str,
) -> Optional[Fix]:
    """Rewrite the import that binds a legacy name and every use of it: `uses` holds (call or bare
    decorator, device, torch.amp name) for every use of every name the statement binds."""
    if type(statement) is cst.ImportFrom:
        module = dotted_name(statement.module) if statement.module is not None and not statement.relative else None
        names = [dotted_name(item.name) for item in statement.names] if type(statement.names) is not cst.ImportStar else []
        if module in ("torch.cuda.amp", "torch.cpu.amp") and all(
            item in ("autocast", "GradScaler", "custom_fwd", "custom_bwd") for item in names
        ):
            new_statement: cst.CSTNode = statement.with_changes(module=parsed_expression("torch.amp"))
        elif module in ("torch.cuda", "torch.cpu") and names == ["amp"]:
            new_statement = statement.with_changes(module=cst.Name("torch"))
        else:
            return None
        changes: dict[cst.CSTNode, object] = {statement: new_statement}
    else:
        if alias.asname is None or dotted_name(alias.name) not in ("torch.cuda.amp", "torch.cpu.amp"):
            return None
        changes = {alias: alias.with_changes(name=parsed_expression("torch.amp"))}
    for node, device, name in uses:
        rewritten = modern_amp_call(node, device, name)
        if rewritten is None:
            return None
        changes[node] = rewritten
    return Fix("safe", description, changes, requires_torch=torch_amp_since(name for _, _, name in uses))


def bfloat16_fix(
    call: cst.Call, source: Optional[cst.BaseExpression], imports: ImportTracker
) -> Optional[Fix]:
    """`source` (the float16 that decides the dtype) becomes `torch.bfloat16`; with no source, the call
    gets `dtype=torch.bfloat16` (its `dtype=` argument becomes `torch.bfloat16` when it has one)."""
    torch, needed = torch_spelling(imports)
    bfloat16 = parsed_expression(f"{torch}.bfloat16")
    description = "compute in bfloat16 (`dtype=torch.bfloat16`): same range as float32, no loss scaling needed"
    if source is not None:
        if type(source) is cst.Attribute:
            bfloat16 = bfloat16.with_changes(lpar=source.lpar, rpar=source.rpar)
        return Fix("unsafe", description, {source: bfloat16}, needed, AUTOCAST_DTYPE_SINCE)
    if any(arg.star for arg in call.args):
        return None
    given = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "dtype"), None)
    if given is not None:  # a dtype the file cannot pin to one expression (`table[choice]`): it is replaced
        return Fix("unsafe", description, {given.value: bfloat16}, needed, AUTOCAST_DTYPE_SINCE)
    args = _with_commas([*call.args, _keyword("dtype", bfloat16)])
    return Fix("unsafe", description, {call: call.with_changes(args=args)}, needed, AUTOCAST_DTYPE_SINCE)


def anomaly_gate_fix(
    call: cst.Call, argument: Optional[cst.Arg], imports: ImportTracker
) -> Optional[Fix]:
    """Turn the switch on only when `DETECT_ANOMALY=1` is set in the environment."""
    if imports.aliases.get("os", "os") != "os":
        return None
    test = parsed_expression(ANOMALY_TEST)
    description = 'turn anomaly detection on only when the environment sets `DETECT_ANOMALY=1`'
    if argument is not None:  # set_detect_anomaly(True), Trainer(detect_anomaly=True)
        return Fix("unsafe", description, {argument.value: test}, ("os",))
    if any(arg.star for arg in call.args) or len([arg for arg in call.args if arg.keyword is None]) > 1:
        return None
    func = call.func
    needed: tuple[str, ...] = ("os",)
    if type(func) is cst.Attribute:
        new_func: cst.BaseExpression = func.with_changes(attr=cst.Name("set_detect_anomaly"))
    else:
        torch, extra = torch_spelling(imports)
        new_func, needed = parsed_expression(f"{torch}.autograd.set_detect_anomaly"), ("os", *extra)
    args = [
        arg.with_changes(keyword=cst.Name("check_nan"), equal=cst.AssignEqual(_NO_SPACE, _NO_SPACE)) if arg.keyword is None else arg
        for arg in call.args
    ]
    return Fix("unsafe", description, {call: call.with_changes(func=new_func, args=_with_commas([cst.Arg(test), *args]))}, needed)
