"""Big files: the analysis grows linearly with the file, and code too deep for Python is refused at once.

Timing is bench/big_file.py's job; here the work is counted: the calls the analysis makes (functions of
stabfix, with generator resumptions, as cProfile counts them) for a file of N training units and one of
4N. A query that rescans the whole file for each candidate makes that ratio grow with N (before the
indexes in the model it was 6.3 for 2 -> 8 units, and 44 s of CPU for 8,000 lines); linear work keeps it
at 4 or below, the fixed cost of a file (imports, rule setup) pulling it under.
"""

from __future__ import annotations

import ast
import cProfile
import importlib.util
import pstats
from pathlib import Path

import pytest

import stabfix
from stabfix import engine
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes

REPO = Path(__file__).resolve().parent.parent
PACKAGE = str(Path(stabfix.__file__).resolve().parent)


def _generator():
    spec = importlib.util.spec_from_file_location("big_file", REPO / "bench" / "big_file.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _every_rule():
    specs = load_catalog()
    available = checker_classes()
    return [available[code] for code in sorted(specs) if code in available], specs


def _calls_to_analyse(text: str) -> int:
    classes, specs = _every_rule()
    profile = cProfile.Profile()
    analysis = profile.runcall(engine.analyse_text, text, "big.py", classes, specs)
    assert analysis.findings, "the generated training code should give every size findings to locate"
    return sum(counts[1] for (path, _, _), counts in pstats.Stats(profile).stats.items() if path.startswith(PACKAGE))


def test_analysis_work_grows_linearly_with_the_file():
    big_file = _generator()
    small = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(2))
    large = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(8))
    growth = _calls_to_analyse(large) / _calls_to_analyse(small)
    assert growth < 4.4, f"4x the training code made the analysis do {growth:.2f}x the work"


def test_no_rule_asks_the_whole_file_for_each_of_its_candidates():
    # past a few units, a question answered from every call, function or instance call of the file for
    # each loop, return or fix grows the work faster than the file: 4 -> 16 units took 4.43x the calls
    # (SF407's instance calls per loop, later uses' callers per return, autocast callers per function,
    # SF104's uses per binding, `functions_called`'s maps per pass); one index each gives 3.97x
    big_file = _generator()
    small = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(4))
    large = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(16))
    growth = _calls_to_analyse(large) / _calls_to_analyse(small)
    assert growth < 4.15, f"4x the training code made the analysis do {growth:.2f}x the work"


def test_a_training_unit_costs_the_analysis_a_bounded_amount_of_work():
    # the part of the file's cost that grows with it, per unit of training code (the 4-unit file's calls
    # taken from the 16-unit file's, which leaves out imports and rule setup): 147,700 calls a unit at
    # 7a37862; 126,400 after the same calls' qualified names and definitions were answered once each,
    # amp's field bindings and a region's calls indexed, and node types tested by identity where
    # `isinstance` with libcst's abstract classes ran a Python-level check per miss (bench/README.md,
    # "bigfile (session 25)")
    big_file = _generator()
    small = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(4))
    large = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(16))
    per_unit = (_calls_to_analyse(large) - _calls_to_analyse(small)) / 12
    assert per_unit < 135_000, f"a unit of training code costs {per_unit:,.0f} calls of stabfix functions"


def test_a_module_level_script_does_not_follow_every_earlier_cell_for_each_cell():
    # notebook cells exported to one module rebind the same names at module level; an eval region ran to
    # the end of the module past every `model = ...`, and each backward pass re-read the bound values of
    # every earlier cell: 10 -> 40 cells made 10.9-11.5x the work. Then 7.07x: for each cell's holder, the
    # uses in every cell were each walked up to their ancestors (is it in the site, in a loop around it?),
    # every cell's optimizer step likewise, and each alias scanned all the bindings reaching a name; sets of
    # the nodes in a site or loop and stopping at the second binding give 5.71x. What is left above 4x is
    # meaning: a name bound in a module-level loop reaches every later use (the loop may run zero times)
    big_file = _generator()

    def script(cells: int) -> str:
        return big_file.HEADER + "loader = []\n" + "".join(big_file.CELL.format(i=index) for index in range(cells))

    growth = _calls_to_analyse(script(40)) / _calls_to_analyse(script(10))
    assert growth < 6.3, f"4x the cells made the analysis do {growth:.2f}x the work"


def test_code_nested_too_deeply_for_python_is_refused_before_libcst_parses_it(monkeypatch):
    # libcst's parser takes minutes on `x = a0 + ... + a19999` (then may crash the process); CPython's
    # own parser refuses it in milliseconds, and no recursive walk of that tree could finish anyway
    text = _generator().generate_long_expression(20000)
    classes, specs = _every_rule()

    def no_libcst(text: str):
        raise AssertionError("libcst was asked to parse code CPython cannot build")

    monkeypatch.setattr(engine, "parse", no_libcst)
    with pytest.raises(RecursionError):
        engine.analyse_text(text, "deep.py", classes, specs)


def test_a_deep_but_valid_file_is_still_parsed(monkeypatch):
    # the guard only refuses what CPython itself refuses: a long flat file goes on to libcst
    text = _generator().generate_long_expression(200)
    classes, specs = _every_rule()
    parsed = []
    original = engine.parse
    monkeypatch.setattr(engine, "parse", lambda source: parsed.append(source) or original(source))
    engine.analyse_text(text, "flat.py", classes, specs)
    assert parsed == [text]


def test_positions_are_generated_once_per_file_for_the_rules_messages_and_the_findings(monkeypatch):
    # SF401 words its message with the line of an alias binding and the engine locates every finding:
    # both read one shared table, so no statement's code is generated for positions twice, and the
    # module as a whole not at all (each statement is placed on its own)
    from stabfix.model.source.positions import _PositionState

    big_file = _generator()
    text = big_file.HEADER + "".join(big_file.UNIT.format(i=index) for index in range(2))
    classes, specs = _every_rule()
    codegens = []
    original = _PositionState.before_codegen
    monkeypatch.setattr(_PositionState, "before_codegen", lambda state, node: codegens.append(node) or original(state, node))
    analysis = engine.analyse_text(text, "big.py", classes, specs)
    aliases = [item.finding for item in analysis.findings if item.finding.code == "SF401"]
    assert aliases and all(f"(line {finding.line - 1})" in finding.message for finding in aliases)
    assert not [node for node in codegens if type(node).__name__ == "Module"]
    assert len({id(node) for node in codegens}) == len(codegens), "a node was generated twice for positions"


def test_a_finding_in_a_big_file_is_placed_by_generating_its_statement_alone():
    # the table used to generate the module from its top as far as the asked node: a finding near the end
    # of a big file cost a codegen of nearly all of it
    import libcst

    from stabfix.model.source.positions import Positions, _PositionState
    from stabfix.model.source.traversal import _record_parents

    text = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(400)) + "y = f3(2)\n"
    module = libcst.parse_module(text)
    parents: dict = {}
    _record_parents(module, parents)
    generated = []
    original = _PositionState.before_codegen

    class Counting(_PositionState):
        def before_codegen(self, node):
            generated.append(node)
            original(self, node)

    import stabfix.model.source.positions as positions_module

    positions_module._PositionState, saved = Counting, positions_module._PositionState
    try:
        positions = Positions(module, text, parents, lambda: ast.parse(text))
        call = module.body[-1].body[0].value
        where = positions[call]
    finally:
        positions_module._PositionState = saved
    assert (where.start.line, where.start.column, where.end.line, where.end.column) == (1601, 4, 1601, 9)
    assert len(generated) < 50, f"{len(generated)} nodes generated to place one call"


def test_a_file_with_a_directive_reads_the_statements_of_its_findings_from_the_traversals_parents(monkeypatch):
    # a directive is matched to each finding's line and to the line its statement starts on: the engine
    # climbs from each finding to its statement. It used to walk the whole module for a parent map as soon
    # as the file held one directive; the traversal has recorded those parents already
    big_file = _generator()
    text = big_file.HEADER + big_file.UNIT.format(i=0)
    classes, specs = _every_rule()
    plain = [item.finding for item in engine.analyse_text(text, "big.py", classes, specs).findings]
    first = plain[0]
    lines = text.splitlines(keepends=True)
    lines[first.line - 1] = lines[first.line - 1].rstrip("\n") + f"  # stabfix: ignore[{first.code}]\n"
    walks = []
    original = engine._parents
    monkeypatch.setattr(engine, "_parents", lambda module: walks.append(module) or original(module))
    analysis = engine.analyse_text("".join(lines), "big.py", classes, specs)
    kept = [(item.finding.code, item.finding.line) for item in analysis.findings]
    assert kept == [(finding.code, finding.line) for finding in plain if finding.line != first.line]
    assert walks == []


def test_the_position_table_gives_libcsts_own_positions_for_every_node():
    # the table keeps libcst's arithmetic in a cheaper codegen state: every node, syntactic positions
    # (parentheses, hoisted starts and ends of decorated functions, params, subscripts) included, whether
    # placed statement by statement (CPython's line of each) or generated from the module's top
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from stabfix.model.source.positions import Positions
    from stabfix.model.source.traversal import _record_parents

    big_file = _generator()
    texts = [
        big_file.HEADER + big_file.UNIT.format(i=0),
        big_file.generate_script(60),
        "@decorate(1)\nasync def f(a, /, b: int = (2), *args, c, **kw) -> None:\n"
        "    x = [y for y in (a)][0:1, ::2]; lambda q, *r: (q)\r\n    return (\n        b\n    )  # end\n\n\n",
        "x = 1",  # no trailing newline
        "",
        # every kind of block CPython's tree holds differently: elif chains, else, except, finally, match,
        # one-line suites, comments a block keeps at its end, statements sharing a line, `del`, async forms
        "# head\nif a:\n    pass\nelif b:  # c\n    x = 1; y = 2\n    # kept by the block\nelif c: z = 3\n"
        "else:\n    del x\n\n\n# lead\ntry:\n    w = (\n        1)\nexcept (E, F) as e:\n    raise\n"
        "except G:\n    pass\nelse:\n\tpass\nfinally:\n    q = 4\nfor i in r:\n    continue\nelse:\n    pass\n"
        "while t:\n    break\nelse: pass\nmatch v:\n    case [1, *rest]:\n        m = 1\n    case _:\n"
        "        @d\n        class K(B):\n            async def g(self):\n                async with a as b, c:\n"
        "                    async for i in b:\n                        global G\n                        assert i, 'x'\n"
        "with (open(p) as f,\n      open(q) as g):\n    f.write(\"\"\"\nmulti\nline\"\"\")  \\\n        ; import os\n"
        "# tail\n",
    ]
    for text in texts:
        module = libcst.parse_module(text)
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        from_top = Positions(module)
        assert {node: from_top[node] for node in expected} == dict(expected)
        parents: dict = {}
        _record_parents(module, parents)
        tree = ast.parse(text)
        by_statement = Positions(module, text, parents, lambda: tree)
        assert {node: by_statement[node] for node in expected} == dict(expected)
        placed = [where for where in by_statement._statements.values() if where is not None]
        assert placed or not module.body or not module.has_trailing_newline


def test_later_uses_follow_a_returned_holders_callers_in_the_order_of_their_own_walk():
    # later uses take a function's callers from the traversal's list of calls (source order) instead of a
    # walk of their own (later calls first, each call before the calls inside it); a node one caller's
    # reads reached is not followed again for the next, so the order decides which read names the consumer
    import textwrap

    import libcst

    from stabfix.model import FileModel
    from stabfix.model.flow.later_uses import LaterUses
    from stabfix.model.source.traversal import MergedVisitor, walk

    source = textwrap.dedent(
        """
        import torch

        def collect(loader, model, extra=None):
            losses = []
            for x in loader:
                losses.append(model(x))
            return losses

        print(collect(a, m))
        print(collect(b, m, collect(c, m)), collect(d, m))
        total = torch.stack(collect(e, m))
        print(total)
        """
    )
    module = libcst.parse_module(source)
    model = FileModel(needs=("uses",))
    walk(module, [MergedVisitor(model.visitors())], parents=model.tree.parents)
    site = next(call for call in model.tree.calls
                if isinstance(call.func, libcst.Attribute) and call.func.attr.value == "append")
    holder = site.func.value
    own_walk = LaterUses(model.names, model.events, model.optimizers, tree=None)
    own_walk.module = module
    order = model.names.uses[holder].order
    function = next(node for node in model.names.scopes if isinstance(node, libcst.FunctionDef))
    with_index = [(read.node, read.need, read.consumer) for read in model.uses.reads(holder, site, order, function, None)]
    with_walk = [(read.node, read.need, read.consumer) for read in own_walk.reads(holder, site, order, function, None)]
    assert len(model.uses._calls_of(function)) == 5
    assert with_index == with_walk and with_index
