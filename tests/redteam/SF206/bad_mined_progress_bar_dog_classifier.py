"""Mined shape (a binary image classifier): the dataset opens each JPEG and augments it, the loader has
`num_workers=0`, and the epoch loop iterates a tqdm progress bar wrapped around the loader."""
from pathlib import Path

import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms
from tqdm import tqdm


class PetPhotos(Dataset):
    def __init__(self, root, split, transform=None):
        self.transform = transform
        self.items = []
        for label, folder in enumerate(("other", "dog")):
            for path in sorted((Path(root) / split / folder).glob("*.jpg")):
                self.items.append((str(path), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, label = self.items[index]
        try:
            picture = Image.open(path).convert("RGB")
        except OSError:
            picture = Image.new("RGB", (224, 224))
        if self.transform is not None:
            picture = self.transform(picture)
        return picture, label


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    augment = transforms.Compose([transforms.Resize((224, 224)), transforms.RandomHorizontalFlip(),
                                  transforms.ToTensor()])
    photos = PetPhotos("prepared", "train", augment)
    train_loader = DataLoader(photos, batch_size=16, shuffle=True, num_workers=0)  # expect: SF206
    net = models.resnet18(weights=None)
    net.fc = nn.Linear(net.fc.in_features, 2)
    net = net.to(device)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(20):
        net.train()
        bar = tqdm(train_loader, desc=f"epoch {epoch + 1}", leave=False)
        for step, (pictures, labels) in enumerate(bar):
            pictures, labels = pictures.to(device), labels.to(device)
            opt.zero_grad()
            loss = loss_fn(net(pictures), labels)
            loss.backward()
            opt.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")


if __name__ == "__main__":
    main()
