"""Mined (keyword-spotting fine-tune): a shuffled training loader and a random train/validation split, a classifier from another module; nothing seeded."""
import torch
import torch.nn.functional as F
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader

from models.audio import AudioClassifier


def train():
    files, labels = list_clips("data/train")
    train_files, val_files, train_labels, val_labels = train_test_split(files, labels, test_size=0.2)
    train_loader = DataLoader(ClipDataset(train_files, train_labels), batch_size=8, shuffle=True)
    model = AudioClassifier(num_classes=12)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(5):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":  # expect: SF420
    train()
