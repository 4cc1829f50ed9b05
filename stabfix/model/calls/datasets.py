"""What a dataset does for each item it hands a `DataLoader`: reads files, decodes, tokenizes, transforms.

`DatasetWork(names, project).per_item(expr)` answers for the dataset expression a loader is built over
(`DataLoader(ds, ...)`): a short description of the work its `__getitem__` does for every item, or None
when the code shows none or does not show it (unknown, never proof either way).

Work is read from what `__getitem__` calls, not from names:
- I/O and decoding: the builtin `open`, or a call into a library that reads or decodes (`PIL.Image.open`,
  `cv2.imread`, `torchvision.io.read_image`, `torchaudio.load`, `numpy.load`, `torch.load`, `pandas.read_*`,
  `json.load`, `h5py.File`...);
- transforms: a call into `torchvision.transforms`/`albumentations`, a tokenizer built by `transformers`, or
  a callable the dataset holds (`self.transform(img)`, `self.tokenizer(text)`: an attribute that is called and
  is not a method of the class);
- any of those in a method of the class or a function of the file `__getitem__` calls (`MAX_DEPTH` deep).
The dataset is followed from a name to what builds it: a class of the file, a class of another scanned
file (the project index: the other file's model answers, node-free), a `Subset`/`ConcatDataset` over one,
or a torchvision dataset (each item is a PIL image made and transformed on the fly). `TensorDataset` and
anything else torch builds over tensors already in memory does no per-item work.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names
from stabfix.model.source.project_view import ProjectQueries
from stabfix.model.source.scopes import first_parameter
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import children

MAX_DEPTH = 2  # calls followed from `__getitem__`
# Calls that read or decode data, by qualified name (exact) or module prefix.
READERS = frozenset({
    "torch.load", "numpy.load", "numpy.fromfile", "numpy.loadtxt", "numpy.genfromtxt", "json.load", "json.loads",
    "pickle.load", "pickle.loads", "h5py.File", "PIL.Image.open", "scipy.io.loadmat", "scipy.io.wavfile.read",
})
READER_MODULES = ("cv2.", "imageio.", "torchvision.io.", "torchaudio.", "soundfile.", "librosa.", "skimage.io.",
                  "pandas.read_", "nibabel.", "pydicom.", "decord.", "av.")
TRANSFORM_MODULES = ("torchvision.transforms.", "albumentations.", "transformers.", "tokenizers.",
                     "sentencepiece.", "torchtext.")
WRAPPING_DATASETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset",
                               "torch.utils.data.ConcatDataset", "torch.utils.data.dataset.ConcatDataset"})
_TORCHVISION_DATASETS = "torchvision.datasets."


class DatasetWork:
    def __init__(self, names: Names, project: Optional[ProjectQueries] = None) -> None:
        self.names = names
        self.project = project

    def per_item(self, expr: Optional[cst.BaseExpression], depth: int = 0) -> Optional[str]:
        """What the dataset `expr` does for each item (a phrase for a message), or None."""
        if expr is None or depth > 4:
            return None
        if type(expr) is cst.Name and expr in self.names.uses:
            values = [b.bound_value for b in self.names.bindings_of(expr)]
            if not values or any(value is None for value in values):
                return None  # a parameter, a loop target: not shown
            found = [self.per_item(value, depth + 1) for value in values]
            return found[0] if all(found) else None
        owner = self._receiver_class(expr)
        if owner is not None:  # `self.train_set` of a method: what the class binds it to
            bindings = self.names.attribute_bindings(owner, expr.attr.value) if owner is not None else []
            values = [b.bound_value for b in bindings]
            if not values or any(value is None for value in values):
                return None
            found = [self.per_item(value, depth + 1) for value in values]
            return found[0] if all(found) else None
        if type(expr) is not cst.Call:
            return None
        local = self._local_class(expr.func)
        if local is not None:
            return class_work(local, self.names)
        factory = self.names.definition_of(expr) if type(expr.func) is cst.Name else None
        if factory is not None:  # `dataset = build_dataset(cfg)`: what every `return` of the file's function builds
            found = [self.per_item(value, depth + 1) for value in _returned(factory)]
            return found[0] if found and all(found) else None
        qualified = self.names.qualify(expr.func) or ""
        if qualified in WRAPPING_DATASETS and expr.args:
            inner = expr.args[0].value
            if type(inner) in (cst.List, cst.Tuple):
                found = [self.per_item(element.value, depth + 1) for element in inner.elements]
                return next((work for work in found if work), None)
            return self.per_item(inner, depth + 1)
        if qualified.startswith(_TORCHVISION_DATASETS) and qualified.rsplit(".", 1)[-1][:1].isupper():
            return f"`{qualified.rsplit('.', 1)[-1]}` makes a PIL image of each item and runs its transforms"
        if qualified and self.project is not None:
            try:
                return self.project.foreign(qualified, lambda d: class_work(d.node, d.model.names),
                                            needs=("names",), kinds=("class",))
            except Exception:  # another file the index cannot read is unknown, never proof
                return None
        return None

    def _local_class(self, func: cst.BaseExpression) -> Optional[cst.ClassDef]:
        if type(func) is not cst.Name:
            return None
        bindings = self.names.bindings_of(func) if func in self.names.uses else self.names._module_bindings(func.value)
        if len(bindings) == 1 and bindings[0].kind == "class" and type(bindings[0].node) is cst.ClassDef:
            return bindings[0].node
        return None

    def _receiver_class(self, expr: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class whose method's receiver (first parameter, whatever its name) `expr` reads an attribute of."""
        if not (type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value in self.names.uses):
            return None
        bindings = self.names.bindings_of(expr.value)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].scope is None:
            return None
        method, owner = bindings[0].scope.node, self.names.enclosing_class(bindings[0].scope)
        return owner if type(method) is cst.FunctionDef and first_parameter(method) == expr.value.value else None


def class_work(owner: cst.ClassDef, names: Names) -> Optional[str]:
    """What the class's `__getitem__` does for each item (node-free: safe to return from another file)."""
    methods = _methods(owner)
    getitem = methods.get("__getitem__")
    return _work_in(getitem, owner, methods, names, 0) if getitem is not None else None


def _work_in(function: cst.FunctionDef, owner: cst.ClassDef, methods: dict[str, cst.FunctionDef], names: Names,
             depth: int) -> Optional[str]:
    receiver = first_parameter(function)  # `self`, whatever the method calls it
    for call in _calls(function):
        work = _call_work(call, receiver, owner, methods, names)
        if work is not None:
            return work
        if depth >= MAX_DEPTH:
            continue
        callee = _callee(call, receiver, methods, names)
        if callee is not None and callee is not function:
            work = _work_in(callee, owner, methods, names, depth + 1)
            if work is not None:
                return work
    return None


def _call_work(call: cst.Call, receiver: str, owner: cst.ClassDef, methods: dict[str, cst.FunctionDef],
               names: Names) -> Optional[str]:
    func = call.func
    if type(func) is cst.Name and func.value == "open" and not (func in names.uses and names.bindings_of(func)):
        return f"opens a file (`{code_of(call, 60)}`)"
    qualified = names.qualify(func) or ""
    if qualified in READERS or qualified.startswith(READER_MODULES):
        return f"reads or decodes with `{code_of(func, 60)}`"
    if qualified.startswith(TRANSFORM_MODULES):
        return f"transforms or tokenizes with `{code_of(func, 60)}`"
    held = _self_attribute(func, receiver)
    if held is not None and held not in methods and names.attribute_bindings(owner, held):
        # `self.transform(img)`: a callable the dataset was handed or built, called per item
        return f"calls `{receiver}.{held}` on each item"
    if type(func) is cst.Attribute:
        held = _self_attribute(func.value, receiver)
        if held is not None and held not in methods:  # `self.tokenizer.encode(text)` of a library's object
            for binding in names.attribute_bindings(owner, held):
                value = binding.bound_value
                built = names.qualify(value.func) or "" if type(value) is cst.Call else ""
                if built.startswith(TRANSFORM_MODULES) or built in READERS or built.startswith(READER_MODULES):
                    return f"calls `{receiver}.{held}.{func.attr.value}` (built by `{code_of(value.func, 60)}`) on each item"
    return None


def _returned(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    return [node.value for node in _walk_body(function) if type(node) is cst.Return and node.value is not None]


def _callee(call: cst.Call, receiver: str, methods: dict[str, cst.FunctionDef], names: Names) -> Optional[cst.FunctionDef]:
    held = _self_attribute(call.func, receiver)
    if held is not None:
        return methods.get(held)
    try:
        return names.definition_of(call)
    except Exception:  # a call the names part did not record: not followed
        return None


def _self_attribute(expr: cst.BaseExpression, receiver: str) -> Optional[str]:
    if receiver and type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == receiver:
        return expr.attr.value
    return None


def _methods(owner: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    body = owner.body.body if type(owner.body) is cst.IndentedBlock else ()
    return {item.name.value: item for item in body if type(item) is cst.FunctionDef}


def _walk_body(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """The function body's nodes in source order, not those of functions or classes nested in it."""
    found, stack = [], [function.body]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed([child for child in children(node) if type(child) not in (cst.FunctionDef, cst.ClassDef)]))
    return found


def _calls(function: cst.FunctionDef) -> list[cst.Call]:
    return [node for node in _walk_body(function) if type(node) is cst.Call]  # in order: the message names the first work
