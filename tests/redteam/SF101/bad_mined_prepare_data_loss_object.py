"""Mined shape: a data-preparation helper converts numpy images and line labels with
torch.tensor(..., requires_grad=True) and returns both; a per-sample loop hands each label to the `get_loss`
method of a loss object whose class is defined in the file (bad: nothing reads the labels' gradient)."""
import torch


class LineDistanceLoss:
    def __init__(self, image_size):
        self.image_size = image_size

    def get_loss(self, estimate, label):
        return (estimate - label).abs().sum() / self.image_size


def prepare_data(images, labels, use_cuda):
    images = torch.tensor(images)
    labels = torch.tensor(labels, requires_grad=True)  # expect: SF101
    if use_cuda:
        images = images.cuda()
    images = images.permute(0, 3, 1, 2) - 0.5
    return images, labels


def batch_loss(loss_function, prediction, labels):
    losses = torch.zeros(labels.size(0))
    for b in range(labels.size(0)):
        losses[b] = loss_function.get_loss(prediction[b], labels[b])
    return losses


def train(net, dataset, optimizer, use_cuda, steps=10):
    loss_function = LineDistanceLoss(64)
    for _ in range(steps):
        images, labels = dataset.sample()
        images, labels = prepare_data(images, labels, use_cuda)
        prediction = net(images).cpu()
        loss = batch_loss(loss_function, prediction, labels).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
