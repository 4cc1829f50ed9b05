"""`calls/datasets.py`: what the dataset a DataLoader draws from does for each item (SF206's fact), read from what
`__getitem__` calls, through names, wrappers and into another scanned file, never from a name."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model import FileModel
from stabfix.model.calls.datasets import DatasetWork
from stabfix.model.source.traversal import walk
from stabfix.project import Project, ProjectIndex


def _work(source: str, others: dict[str, str] | None = None) -> str | None:
    """What `DatasetWork` says about the dataset of the file's one `DataLoader(ds, ...)`."""
    text = textwrap.dedent(source)
    project = None
    if others is not None:
        sources = {path: textwrap.dedent(code) for path, code in others.items()} | {"main.py": text}
        project = Project(ProjectIndex.from_sources(sources)).view("/stabfix-sources/main.py")
    module = cst.parse_module(text)
    model = FileModel(needs=("names",), project=project)
    walk(module, model.visitors())
    loaders = []

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "DataLoader":
                loaders.append(node)

    module.visit(Find())
    return DatasetWork(model.names, project).per_item(loaders[0].args[0].value)


IMAGES = '''
from PIL import Image
from torch.utils.data import DataLoader, Dataset

class Pictures(Dataset):
    def __init__(me, paths, tf):
        me.paths, me.tf = paths, tf

    def __getitem__(me, i):
        return me.tf(Image.open(me.paths[i]))
'''


def test_calling_a_held_transform_per_item_is_work_whatever_the_receiver_is_called():
    assert _work(IMAGES + "ds = Pictures(['a.png'], None)\nDataLoader(ds)\n") == "calls `me.tf` on each item"


def test_indexing_tensors_held_in_memory_is_no_work():
    assert _work('''
        import torch
        from torch.utils.data import DataLoader, Dataset, TensorDataset

        class Rows(Dataset):
            def __init__(self, x):
                self.x = torch.as_tensor(x)

            def __getitem__(self, i):
                return self.x[i].float()

        DataLoader(Rows([1.0]))
    ''') is None
    assert _work("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                 "DataLoader(TensorDataset(torch.zeros(4)))\n") is None


def test_a_held_callable_a_helper_a_subset_and_torchvision_datasets_are_followed():
    assert _work('''
        import numpy as np
        from torch.utils.data import DataLoader, Dataset, Subset

        def load(path):
            return np.load(path)

        class Arrays(Dataset):
            def __getitem__(self, i):
                return load(self.files[i])

        DataLoader(Subset(Arrays(), [0, 1]))
    ''') == "reads or decodes with `np.load`"
    assert _work('''
        from torch.utils.data import DataLoader, Dataset

        class Texts(Dataset):
            def __init__(self, rows, tokenizer):
                self.rows, self.tokenizer = rows, tokenizer

            def __getitem__(self, i):
                return self.tokenizer(self.rows[i])

        DataLoader(Texts([], None))
    ''') == "calls `self.tokenizer` on each item"
    assert "makes a PIL image of each item" in _work(
        "from torchvision import datasets\nfrom torch.utils.data import DataLoader\n"
        "DataLoader(datasets.CIFAR10('data'))\n")


def test_a_dataset_class_of_another_file_is_read_there():
    main = "from torch.utils.data import DataLoader\nfrom data import Pictures\nDataLoader(Pictures([], None))\n"
    assert _work(main, {"data.py": IMAGES}) == "calls `me.tf` on each item"
    assert _work(main) is None  # alone, the class is not shown: unknown, not work


def test_a_dataset_built_by_a_function_of_the_file_is_what_it_returns():
    assert _work(IMAGES + "def build(paths):\n    return Pictures(paths, None)\n\nDataLoader(build([]))\n") == \
        "calls `me.tf` on each item"
    assert _work("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                 "def build():\n    return TensorDataset(torch.zeros(4))\n\nDataLoader(build())\n") is None
