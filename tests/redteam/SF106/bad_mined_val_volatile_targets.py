"""Mined shape: val() called from the epoch loop; eval(), then a detector forward per batch with targets wrapped in legacy Variable(volatile=True), which is ignored (bad)."""
import torch
from torch.autograd import Variable


def val(epoch, net, criterion, val_loader, use_cuda):
    net.eval()
    losses = 0
    for step, (images, targets) in enumerate(val_loader):
        images = Variable(images.cuda() / 255.0) if use_cuda else Variable(images / 255.0)
        targets = [Variable(t.cuda(), volatile=True) for t in targets] if use_cuda else [Variable(t, volatile=True) for t in targets]
        out = net(images)  # expect: SF106
        loss_a, loss_b = criterion(out, targets)
        losses += (loss_a + loss_b).item()
    return losses / (step + 1)


def train(net, criterion, optimizer, train_loader, val_loader, epochs, use_cuda):
    for epoch in range(epochs):
        net.train()
        for images, targets in train_loader:
            out = net(images)
            loss_a, loss_b = criterion(out, targets)
            optimizer.zero_grad()
            (loss_a + loss_b).backward()
            optimizer.step()
        val(epoch, net, criterion, val_loader, use_cuda)
