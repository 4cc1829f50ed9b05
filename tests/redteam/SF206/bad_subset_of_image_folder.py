"""A random split of an ImageFolder: the training Subset still decodes a JPEG per item in the main process."""
import torch
from torch.utils.data import DataLoader, random_split, Subset
from torchvision import datasets, transforms


def main(model):
    full = datasets.ImageFolder("images/", transform=transforms.Compose([transforms.Resize(256), transforms.ToTensor()]))
    train_idx = list(range(0, len(full), 10))
    train_set = Subset(full, train_idx)
    loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=0)  # expect: SF206
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(30):
        for i, (inputs, labels) in enumerate(loader):
            inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            opt.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            opt.step()
