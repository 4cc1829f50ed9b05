"""Segmentation training: each item reads an image and a mask with cv2 and augments both with albumentations."""
import albumentations as A
import cv2
import torch
from torch.utils.data import DataLoader, Dataset


class SegmentationSet(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs
        self.augment = A.Compose([A.HorizontalFlip(), A.RandomBrightnessContrast()])

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        image_path, mask_path = self.pairs[i]
        image = cv2.cvtColor(cv2.imread(image_path), cv2.COLOR_BGR2RGB)
        mask = cv2.imread(mask_path, cv2.IMREAD_GRAYSCALE)
        out = self.augment(image=image, mask=mask)
        return torch.from_numpy(out["image"]).permute(2, 0, 1).float(), torch.from_numpy(out["mask"]).long()


def train(net, pairs, epochs, lr=1e-3):
    device = torch.device("cuda:0")
    net = net.to(device)
    train_dl = DataLoader(SegmentationSet(pairs), batch_size=8, shuffle=True, drop_last=True)  # expect: SF206
    optim = torch.optim.Adam(net.parameters(), lr=lr)
    for epoch in range(epochs):
        for images, masks in train_dl:
            images = images.to(device)
            masks = masks.to(device)
            loss = torch.nn.functional.cross_entropy(net(images), masks)
            optim.zero_grad()
            loss.backward()
            optim.step()
