"""Mined shape: evaluate() switches to eval and runs model.validation_step over the loader in a comprehension; the model's class (a base class of the file) is not visible at the call, validation_step runs self(images) (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ClassificationBase(nn.Module):
    def training_step(self, batch):
        images, labels = batch
        out = self(images)
        return F.cross_entropy(out, labels)

    def validation_step(self, batch):
        images, labels = batch
        out = self(images)
        loss = F.cross_entropy(out, labels)
        acc = (out.argmax(1) == labels).float().mean()
        return {"val_loss": loss.detach(), "val_acc": acc}

    def validation_epoch_end(self, outputs):
        loss = torch.stack([x["val_loss"] for x in outputs]).mean()
        acc = torch.stack([x["val_acc"] for x in outputs]).mean()
        return {"val_loss": loss.item(), "val_acc": acc.item()}


class Net(ClassificationBase):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 2)

    def forward(self, x):
        return self.fc(x)


def evaluate(model, val_loader):
    model.eval()
    outputs = [model.validation_step(batch) for batch in val_loader]  # expect: SF106
    return model.validation_epoch_end(outputs)


def fit(epochs, lr, model, train_loader, val_loader):
    optimizer = torch.optim.SGD(model.parameters(), lr)
    history = []
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model.training_step(batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        history.append(evaluate(model, val_loader))
    return history
