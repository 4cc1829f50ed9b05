"""Group `stabfix/model/` into layer subpackages and rewrite every reference to the moved modules.

    python tools/relayout_model.py          # move and rewrite (git mv; run from anywhere in the repo)
    python tools/relayout_model.py --check  # say what would change, change nothing

Re-runnable and idempotent: run it again after merging a branch that adds or edits model modules
in the old flat layout (or imports them by their old names) and it moves the new files and rewrites
the new references; a second run changes nothing. A module of `stabfix/model/` that `LAYERS` does
not place stops the run before anything changes: add it to the layer whose modules it imports (a
module may import from its own layer and the layers listed before it; tests/test_import_graph.py
checks that, and reads `LAYERS` from here).

What is rewritten, in every tracked .py/.md/.yaml/.yml/.toml/.txt/.cfg file except this one:
- dotted names and paths: `stabfix.model.names` (imports, `mock.patch` targets, docstrings),
  `stabfix/model/names.py`, `model/names.py`;
- `from stabfix.model import vocabulary as vocab, FileModel` (split by layer; the names that are not
  modules, such as `FileModel`, stay imported from `stabfix.model`);
- `from stabfix.model.structure import FunctionFrame`: a name that the splits of issue 19 moved to
  another module (`MOVED_NAMES`) is imported from there;
- relative imports: every relative import in a moved module (its depth changes), and any relative
  import elsewhere in `stabfix/` that reaches into `stabfix.model`, become absolute;
- in docs/model.md, a module named bare in backticks (`` `names.py` `` -> `` `source/names.py` ``);
and in a rewritten .py file, runs of one-line `from stabfix.model...` imports are put back in order.
Not shipped in the package: it changes the repository, not the product.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
from pathlib import Path

# Lowest layer first. A layer's modules import only from their own layer and the layers before it.
LAYERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "source": (
        "Reading one file's source: the traversal, syntax helpers, positions, the definitions around a node,\n"
        "imports, names and their bindings in Python's scopes, the sites of statements, and the word lists.",
        ("node_fields", "traversal", "tree_index", "syntax", "statement_lines", "positions", "enclosing", "imports", "scopes", "regions", "binding_recorder", "callables",
         "names", "instances", "origins", "places", "vocabulary", "project_view",
         "container_fills", "lazy_inits"),
    ),
    "calls": (
        "What a call or an expression is in torch's terms: a device and a move, a module's forward, an optimizer,\n"
        "a loss and what it is made of, an output activation, a log-softmax or gather, a training event (backward, step, zero_grad...).",
        ("devices", "datasets", "modules", "module_classes", "optimizers", "loss_sources", "losses", "loss_operands", "loss_uses", "activations", "numerics", "numeric_guards", "masks",
         "event_sites", "event_kinds", "backward_wrappers", "events", "torch_ops", "schedulers", "collectives", "runners",
         "quotient_uses"),
    ),
    "flow": (
        "Where values go and what they carry: what an expression is and where it lives, autograd history, where a\n"
        "value is handed, later uses of a held value, tensors that alias or change in place, graph cuts, gradient\n"
        "use, recurrent state, parameter origins and in-place updates.",
        ("value_facts", "call_values", "values", "graph_uses", "returned_values", "gradient_use", "grad_reach", "history", "flows", "holder_resets", "later_uses", "value_keys",
         "tensor_identity", "graph_cuts", "recurrence", "parameters", "per_pass", "updates", "callers", "grad_coverage", "held_kinds", "host_tensors",
         "loss_operand_values"),
    ),
    "training": (
        "Training structure: step loops and step functions, the gates that make code run on only some steps,\n"
        "train/eval mode switches, gradient accumulation, and state a loop carries into its next iteration.",
        ("structure", "step_frames", "step_recognition", "step_paths", "gates", "modes", "accumulation", "carried",
         "running_totals",
         "trained_modules"),
    ),
    "functions": (
        "What each function of the file does, as its callers see it: node-free summaries of what it returns and\n"
        "what it does to its arguments and to `self`, followed any number of calls deep and into other files of the scan.",
        ("body_effects", "summary_facts", "fixpoint", "instance_calls", "returns", "grad_unread", "effects", "summaries", "call_events",
         "trained_returns"),
    ),
    "domain": (
        "Facts for one concern each, built on the layers below: mixed precision and dtypes, device memory and\n"
        "long-lived containers, host-accelerator syncs, token generation, parameter-sized buffers, adapters, distributed runs.",
        ("amp", "dtype_values", "version_tests", "dtype_gates", "cleanup", "containers", "container_uses", "store_roles", "container_roles", "host_sync",
         "generation", "accumulators", "adapters", "randomness", "seeding", "grad_inputs", "ranks", "data_loaders",
         "distributed", "objective_targets", "loss_targets", "evaluations",
         "checkpoint_files", "device_caches", "grad_clears", "optimizer_tensors", "log_prob_picks", "key_checks",
         "rank_splits", "world_sizes"),
    ),
}

# Names that the splits before the layout moved out of a module (issue 19): a branch written against
# the old module still imports them from there.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "structure": {
        **dict.fromkeys(
            ("PathFacts", "ClassFrame", "FunctionFrame", "LoopFrame", "BranchFrame", "OpaqueFrame", "Frame", "StepPath",
             "loop_header", "target_names"),
            "step_frames",
        ),
        **dict.fromkeys(("DEVICE_MODULES", "MEMORY_IN_USE_CALLS"), "step_paths"),
        **dict.fromkeys(("STEP_TOKENS", "OPTIMIZER_TOKENS"), "step_recognition"),
    },
    "containers": {
        **dict.fromkeys(
            ("WRITERS", "writes_out", "hands_over", "STORE_METHODS", "EVICT_METHODS", "METADATA_READS", "ContainerKey",
             "Store", "Load", "ContainerUse", "LocalBinding", "LocalBindings", "is_self", "names_own_class",
             "owner_attribute", "self_attribute", "single_index", "reads_entry", "mutates", "UseWalker"),
            "container_uses",
        ),
        **dict.fromkeys(("SETUP_METHODS", "ContainerRoles"), "container_roles"),
    },
    "tensor_identity": {
        **dict.fromkeys(("operand_positions", "is_meta_operand", "peel_common", "loss_term_calls"), "loss_operands"),
        "LossCall": "losses",
    },
    "numerics": dict.fromkeys(
        ("GuardedDivisor", "guarded_divisor", "scale_like", "roots", "autocast_dtype", "made_half", "made_full_precision",
         "host_number_of", "float32_under_autocast", "centred", "is_logarithm", "bounds_above", "exceeds", "AUTOCAST",
         "HALF", "FULL_PRECISION", "LOGARITHMS"),
        "numeric_guards",
    ),
    "distributed": {
        **dict.fromkeys(
            ("RANK_CALLS", "RANK_ENV", "PER_PROCESS_ENV", "RANK_ATTRIBUTES", "MAIN_ATTRIBUTES", "MAIN_DECORATORS",
             "RANK_FREE", "RankFacts"),
            "ranks",
        ),
        **dict.fromkeys(
            ("LOADER_CLASSES", "DISTRIBUTED_SAMPLERS", "PLAIN_SAMPLERS", "Loader", "argument", "DataPipeline"),
            "data_loaders",
        ),
    },
}

MODULE_LAYER = {module: layer for layer, (_, modules) in LAYERS.items() for module in modules}
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg"}
MODEL = Path("stabfix/model")

# A dotted or slashed reference into stabfix.model: the separator is captured so `.` and `/` never mix.
_QUALIFIED = re.compile(r"\bstabfix([./])model((?:\1\w+)+)")
_SHORT_PATH = re.compile(r"(?<![\w/.])model/((?:\w+/)*\w+)(?=\.py\b)")
_FROM_MODEL = re.compile(r"^([ \t]*)from[ \t]+stabfix\.model(\.\w+)?[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*[^\n#\s])", re.M)
_FROM_MODULE = re.compile(
    r"^([ \t]*)from[ \t]+stabfix\.model\.(?:(\w+)\.)?(\w+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*[^\n#\s])", re.M)
_RELATIVE = re.compile(r"^([ \t]*)from[ \t]+(\.+)([\w.]*)[ \t]+import\b", re.M)
_DOC_BARE = re.compile(r"`(\w+)\.py`")


class LayoutError(Exception):
    pass


def run_git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def new_parts(parts: list[str], flat_modules: set[str]) -> list[str] | None:
    """The parts after `stabfix.model` in the new layout, or None when they name no placed module.
    `flat_modules`: the modules still at the top of stabfix/model (a name that is both a layer and
    a flat module, if any ever is, means the module)."""
    if parts[0] in LAYERS and parts[0] not in flat_modules and len(parts) > 1 and parts[1] in MODULE_LAYER:
        module, rest = parts[1], parts[2:]
    elif parts[0] in MODULE_LAYER:
        module, rest = parts[0], parts[1:]
    else:
        return None
    return [MODULE_LAYER[module], module, *rest]


def rewrite_qualified(text: str, flat_modules: set[str]) -> str:
    def qualified(match: re.Match) -> str:
        sep = match.group(1)
        parts = match.group(2)[1:].split(sep)
        placed = new_parts(parts, flat_modules)
        return match.group(0) if placed is None else sep.join(["stabfix", "model", *placed])

    def short(match: re.Match) -> str:
        placed = new_parts(match.group(1).split("/"), flat_modules)
        return match.group(0) if placed is None else "model/" + "/".join(placed)

    return _SHORT_PATH.sub(short, _QUALIFIED.sub(qualified, text))


def imported_items(names: str) -> list[str]:
    """`a, b as c` or `(\n    a,\n    b as c,\n)` -> ["a", "b as c"] (comments dropped)."""
    inner = names[1:-1] if names.startswith("(") else names
    inner = re.sub(r"#[^\n]*", "", inner)
    return [" ".join(item.split()) for item in inner.replace("\n", " ").split(",") if item.strip()]


def rewrite_moved_names(text: str) -> str:
    """`from stabfix.model.structure import FunctionFrame, StepIndex`: a name a split moved out of its
    module is imported from where it lives now (`step_frames`); `rewrite_qualified` then adds the layer."""

    def split(match: re.Match) -> str:
        indent, layer, module, names = match.group(1), match.group(2), match.group(3), match.group(4)
        moved = MOVED_NAMES.get(module)
        if moved is None or (layer is not None and layer not in LAYERS):
            return match.group(0)
        by_module: dict[str, list[str]] = {}
        for item in imported_items(names):
            by_module.setdefault(moved.get(item.split(" as ")[0].strip(), module), []).append(item)
        if list(by_module) == [module]:
            return match.group(0)
        here = f"stabfix.model.{layer}." if layer else "stabfix.model."
        return "\n".join(
            f"{indent}from {here if target == module else 'stabfix.model.'}{target} import {', '.join(items)}"
            for target, items in sorted(by_module.items()))

    return _FROM_MODULE.sub(split, text)


def rewrite_from_model(text: str, flat_modules: set[str]) -> str:
    """`from stabfix.model[.<layer>] import a, b as c, FileModel`: each module from its layer."""

    def split(match: re.Match) -> str:
        indent, package, names = match.group(1), match.group(2), match.group(3)
        if package and package[1:] not in LAYERS:
            return match.group(0)  # `from stabfix.model.values import X`: a module, done by rewrite_qualified
        if package and package[1:] in flat_modules:
            return match.group(0)
        items = imported_items(names)
        by_package: dict[str, list[str]] = {}
        for item in items:
            name = item.split(" as ")[0].strip()
            target = f"stabfix.model.{MODULE_LAYER[name]}" if name in MODULE_LAYER else f"stabfix.model{package or ''}"
            by_package.setdefault(target, []).append(item)
        if list(by_package) == [f"stabfix.model{package or ''}"]:
            return match.group(0)
        lines = [f"{indent}from {target} import {', '.join(items)}" for target, items in sorted(by_package.items())]
        return "\n".join(lines)

    return _FROM_MODEL.sub(split, text)


def absolutize_relative(text: str, package: str, everything: bool) -> str:
    """Relative imports made absolute: all of them (`everything`, a module about to move) or those
    reaching into stabfix.model."""

    def absolute(match: re.Match) -> str:
        indent, dots, rest = match.group(1), match.group(2), match.group(3)
        base = package.split(".")
        if len(dots) > 1:
            base = base[: -(len(dots) - 1)]
        target = ".".join([*base, rest] if rest else base)
        if not everything and not (target == "stabfix.model" or target.startswith("stabfix.model.")):
            return match.group(0)
        return f"{indent}from {target} import"

    return _RELATIVE.sub(absolute, text)


def sort_model_imports(text: str) -> str:
    """Runs of one-line `from stabfix.model... import ...` statements in module order, as a moved
    module's new path may no longer sort where its old one did."""
    lines = text.split("\n")
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        out.extend(sorted(run, key=lambda line: line.split(" import ")[0]))
        run.clear()

    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("from stabfix.model") and "(" not in line and (not run or _indent(run[0]) == _indent(line)):
            run.append(line)
            continue
        flush()
        if stripped.startswith("from stabfix.model") and "(" not in line:
            run.append(line)
        else:
            out.append(line)
    flush()
    return "\n".join(out)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def rewrite_doc_table(text: str) -> str:
    def bare(match: re.Match) -> str:
        module = match.group(1)
        return f"`{MODULE_LAYER[module]}/{module}.py`" if module in MODULE_LAYER else match.group(0)

    return _DOC_BARE.sub(bare, text)


def current_locations(root: Path) -> dict[str, Path]:
    """Every model module (not a package __init__) by name, wherever it sits now."""
    located: dict[str, Path] = {}
    for path in sorted((root / MODEL).rglob("*.py")):
        relative = path.relative_to(root / MODEL)
        if path.name == "__init__.py" or "__pycache__" in relative.parts:
            continue
        if len(relative.parts) > 2:
            raise LayoutError(f"{path.relative_to(root)}: deeper than one layer; place it by hand")
        if path.stem in located:
            raise LayoutError(
                f"{path.stem}.py is in two places: {located[path.stem].relative_to(root)} and {path.relative_to(root)}"
                " (a merge brought back the flat file?): keep one")
        located[path.stem] = path
    return located


def plan(root: Path) -> tuple[dict[Path, Path], list[str]]:
    located = current_locations(root)
    unplaced = sorted(name for name in located if name not in MODULE_LAYER)
    if unplaced:
        raise LayoutError(
            "new module not in the mapping: " + ", ".join(f"stabfix/model/{name}.py" for name in unplaced)
            + f"; add each to LAYERS in {Path(__file__).relative_to(root)} (the lowest layer holding everything"
            " it imports) and run again")
    stray = sorted(
        path.name for path in (root / MODEL).iterdir()
        if path.is_dir() and path.name != "__pycache__" and path.name not in LAYERS)
    if stray:
        raise LayoutError(f"stabfix/model/{stray[0]}/ is not a layer of LAYERS: add it there or move its modules")
    moves = {path: root / MODEL / MODULE_LAYER[name] / f"{name}.py" for name, path in located.items()}
    moves = {old: new for old, new in moves.items() if old != new}
    missing = sorted(name for name in MODULE_LAYER if name not in located)
    return moves, missing


def rewrite_files(root: Path, moves: dict[Path, Path], write: bool) -> list[Path]:
    flat_modules = {path.stem for path in (root / MODEL).glob("*.py") if path.name != "__init__.py"}
    moving = set(moves)
    changed = []
    this = Path(__file__).resolve()
    for name in run_git(root, "ls-files", "-z").split("\0"):
        path = root / name
        if not name or path.suffix not in TEXT_SUFFIXES or path.resolve() == this or not path.is_file():
            continue
        before = path.read_text(encoding="utf-8")
        text = before
        if path.suffix == ".py" and name.startswith("stabfix/"):
            package = ".".join(Path(name).with_suffix("").parts[:-1])
            if path.name == "__init__.py":
                package = ".".join(Path(name).parent.parts)
            text = absolutize_relative(text, package, everything=path in moving)
        if path.suffix == ".py":
            text = rewrite_moved_names(text)
            text = rewrite_from_model(text, flat_modules)
        text = rewrite_qualified(text, flat_modules)
        if path.suffix == ".py" and text != before:
            text = sort_model_imports(text)
        if name == "docs/model.md":
            text = rewrite_doc_table(text)
        if text != before:
            changed.append(path)
            if write:
                path.write_text(text, encoding="utf-8")
    return changed


def layer_init(layer: str) -> str:
    summary, modules = LAYERS[layer]
    below = list(LAYERS)[: list(LAYERS).index(layer)]
    reads = f"Imports only from this layer and {', '.join(below)}." if below else "Imports no other layer."
    text = f"{' '.join(summary.split())}\n\n{reads} Laid out by tools/relayout_model.py; tests/test_import_graph.py checks it."
    wrapped = "\n\n".join(textwrap.fill(paragraph, width=100) for paragraph in text.split("\n\n"))
    return f'"""{wrapped}\n"""\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="say what would change, change nothing")
    args = parser.parse_args(argv)
    root = Path(run_git(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel").strip())
    try:
        moves, missing = plan(root)
    except LayoutError as exc:
        print(f"relayout_model: {exc}", file=sys.stderr)
        return 2
    changed = rewrite_files(root, moves, write=not args.check)
    inits = []
    for layer in LAYERS:
        init = root / MODEL / layer / "__init__.py"
        if not init.exists() or init.read_text(encoding="utf-8") != layer_init(layer):
            inits.append(init)
            if not args.check:
                init.parent.mkdir(exist_ok=True)
                init.write_text(layer_init(layer), encoding="utf-8")
                run_git(root, "add", str(init.relative_to(root)))
    for old, new in sorted(moves.items()):
        if not args.check:
            run_git(root, "mv", str(old.relative_to(root)), str(new.relative_to(root)))
    verb = "would" if args.check else "did"
    print(f"relayout_model: {verb} move {len(moves)} modules, rewrite {len(changed)} files, write {len(inits)} layer __init__s")
    for old, new in sorted(moves.items()):
        print(f"  {old.relative_to(root)} -> {new.relative_to(root)}")
    for path in changed:
        print(f"  rewritten {path.relative_to(root)}")
    if missing:
        print(f"  in LAYERS, not in this tree (skipped): {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
