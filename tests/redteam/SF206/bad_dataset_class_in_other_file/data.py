"""The dataset lives in its own module: it opens a PIL image per item."""
from PIL import Image
from torch.utils.data import Dataset


class Photos(Dataset):
    def __init__(self, paths, transform):
        self.paths = paths
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.transform(Image.open(self.paths[i]))
