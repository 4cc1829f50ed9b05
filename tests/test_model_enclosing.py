"""The shared tracker of enclosing classes and functions: what it answers while the other parts and
checkers visit a node, including in their `visit_FunctionDef`/`leave_FunctionDef`."""

from __future__ import annotations

import libcst as cst

from stabfix.model import FileModel
from stabfix.model.source.traversal import walk

SOURCE = '''
class Outer:
    class TestInner:
        def method(self, x=call_in_default()):
            def closure():
                call_in_closure()
            lam = lambda: call_in_lambda()
    call_in_class_body()

def function():
    class Local:
        call_in_local_class()
'''


class _Recorder(cst.BatchableCSTVisitor):
    """Runs after the model's parts, as a checker does, and records what the tracker says."""

    def __init__(self, model: FileModel) -> None:
        super().__init__()
        self.enclosing = model.enclosing
        self.calls: dict[str, tuple[list[str], list[str], str | None, str | None]] = {}
        self.at_function_edges: list[tuple[str, str, list[str]]] = []

    def _names(self, nodes) -> list[str]:
        return [node.name.value for node in nodes]

    def visit_Call(self, node: cst.Call) -> None:
        function = self.enclosing.innermost_function()
        cls = self.enclosing.innermost_class()
        self.calls[node.func.value] = (  # type: ignore[attr-defined]
            self._names(self.enclosing.enclosing_functions()),
            self._names(self.enclosing.enclosing_classes()),
            function.name.value if function is not None else None,
            cls.name.value if cls is not None else None,
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.at_function_edges.append(("visit", node.name.value, self._names(self.enclosing.enclosing_functions())))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.at_function_edges.append(
            ("leave", original_node.name.value, self._names(self.enclosing.enclosing_functions()))
        )


def _record() -> _Recorder:
    model = FileModel()
    recorder = _Recorder(model)
    walk(cst.parse_module(SOURCE), [*model.visitors(), recorder])
    return recorder


def test_each_call_sees_its_enclosing_definitions_outermost_first() -> None:
    calls = _record().calls
    assert calls["call_in_default"] == (["method"], ["Outer", "TestInner"], "method", "TestInner")
    assert calls["call_in_closure"] == (["method", "closure"], ["Outer", "TestInner"], "closure", "TestInner")
    # a lambda is not a function here
    assert calls["call_in_lambda"] == (["method"], ["Outer", "TestInner"], "method", "TestInner")
    assert calls["call_in_class_body"] == ([], ["Outer"], None, "Outer")
    assert calls["call_in_local_class"] == (["function"], ["Local"], "function", "Local")


def test_a_definition_is_entered_before_and_left_after_everyone_else() -> None:
    assert _record().at_function_edges == [
        ("visit", "method", ["method"]),
        ("visit", "closure", ["method", "closure"]),
        ("leave", "closure", ["method", "closure"]),
        ("leave", "method", ["method"]),
        ("visit", "function", ["function"]),
        ("leave", "function", ["function"]),
    ]
