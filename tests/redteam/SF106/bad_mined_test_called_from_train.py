"""Mined shape: train() calls test(opt, model, loader) after every epoch to keep the best checkpoint; test() evaluates in eval mode with autograd on (bad)."""
import torch


def test(opt, model, loader):
    model.eval()
    correct = 0
    for img, label in loader:
        img, label = img.to(opt.device), label.to(opt.device)
        output = model(img)  # expect: SF106
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(label.view_as(pred)).sum().item()
    return correct / len(loader.dataset)


def train(opt, model, train_loader, test_loader, criterion, optimizer):
    best = 0.0
    for epoch in range(opt.n_epochs):
        model.train()
        for img, label in train_loader:
            img, label = img.to(opt.device), label.to(opt.device)
            loss = criterion(model(img), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc = test(opt, model, test_loader)
        if acc > best:
            best = acc
            torch.save(model.state_dict(), opt.save_path)
