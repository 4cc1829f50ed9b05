"""Mined shape (a medical-image ResNet script): a helper builds the loaders over a dataset that opens a PNG per
item and returns them; `main` hands the training loader to a training function that moves batches to the GPU."""
import csv
import os

import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
preprocess = transforms.Compose([transforms.Resize((300, 300)), transforms.ToTensor()])


def read_index(folder, split):
    paths, labels = [], []
    with open(os.path.join(folder, f"{split}_labels.csv"), newline="") as handle:
        for row in csv.DictReader(handle):
            paths.append(os.path.join(folder, "images", row["image_index"] + ".png"))
            labels.append(int(row["label_index"]))
    return paths, labels


class ScanImages(Dataset):
    def __init__(self, paths, labels, transform=None):
        self.paths, self.labels, self.transform = paths, labels, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        scan = Image.open(self.paths[i]).convert("RGB")
        if self.transform:
            scan = self.transform(scan)
        return scan, self.labels[i], self.paths[i]


def make_loaders(folder):
    train_set = ScanImages(*read_index(folder, "train"), transform=preprocess)
    val_set = ScanImages(*read_index(folder, "val"), transform=preprocess)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: SF206
    val_loader = DataLoader(val_set, batch_size=64, shuffle=False)
    return train_loader, val_loader


def training(train_loader, val_loader, num_classes, epochs):
    model = models.resnet18(weights=None)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-4)
    for epoch in range(epochs):
        model.train()
        for data, label, _ in train_loader:
            data, label = data.to(device), label.to(device)
            loss = criterion(model(data), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            for data, label, _ in val_loader:
                criterion(model(data.to(device)), label.to(device))


def main(folder, num_classes, epochs=15):
    train_loader, val_loader = make_loaders(folder)
    training(train_loader, val_loader, num_classes, epochs)
