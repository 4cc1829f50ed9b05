"""What the code does with a quotient that may blow up (SF304's `a / (b + eps)`): whether a use bounds it.
Built after the traversal from the `tree` part's calls and parents and the `names` part; the questions:

- `tamed(node)`: the value is the argument of a logarithm (`10 * log10(a / (b + 1e-10))`, PSNR, SNR in dB)
  or the operand of a clamp from above (`(a / (b + 1e-8)).clamp(max=1)`, `min(q, 1.0)`): bounded there;
- `only_logged(node)`: the value is assigned to a name (`snr = a / (b + EPS)`) that every later read
  that the binding reaches takes inside a logarithm's argument (`10 * log10(snr + EPS)`);
- `read_out(node)`: the value, or the one name bound to it, is turned into a Python number (`float(q)`,
  `q.item()`, `float((a / (b + eps)).cpu())`): no tensor is scaled by it.
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.calls.numeric_guards import bounds_above, host_number_of, is_logarithm
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import walk
from stabfix.model.source.tree_index import TreeIndex


class QuotientUses:
    def __init__(self, tree: TreeIndex, names: Names) -> None:
        self.tree, self.names = tree, names
        self._tamed: set[int] = set()  # ids of arguments of logs, operands of clamps from above
        self._under_log: set[int] = set()  # names read inside the argument of a log
        self._read_out: set[int] = set()  # values turned into Python numbers
        for call in tree.calls:
            if (number := host_number_of(call, names)) is not None:
                value = names.single_value(number) if type(number) is cst.Name else None
                self._read_out.add(id(value if value is not None else number))
            if is_logarithm(call, names):
                self._tamed.update(id(arg.value) for arg in call.args[:1])
                self._under_log.update(id(n) for arg in call.args[:1] for n in walk(arg.value) if type(n) is cst.Name)
            else:
                operand = bounds_above(call, names)
                if operand is not None:
                    self._tamed.add(id(operand))

    def tamed(self, node: cst.CSTNode) -> bool:
        return id(node) in self._tamed

    def read_out(self, node: cst.CSTNode) -> bool:
        return id(node) in self._read_out

    def only_logged(self, node: cst.CSTNode) -> bool:
        assign = self.tree.parent(node)
        if type(assign) is not cst.Assign or assign.value is not node or len(assign.targets) != 1 \
                or type(assign.targets[0].target) is not cst.Name:
            return False
        target = assign.targets[0].target
        scope = self.names.scope_of(target)
        if scope is None:
            return False
        bindings = [b for b in scope.resolving(target.value).bindings.get(target.value, []) if b.value is node]
        uses = [name for name in self.names.uses if name.value == target.value and name is not target
                and bindings and bindings[0] in self.names.reaching(name)]
        return bool(uses) and all(id(name) in self._under_log for name in uses)
