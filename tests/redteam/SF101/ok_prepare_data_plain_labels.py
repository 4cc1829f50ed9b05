"""Near miss: the data-preparation helper converts the labels without requires_grad, and the images it marks are
the network input whose gradient the caller reads for a saliency map (legitimate)."""
import torch


class LineDistanceLoss:
    def __init__(self, image_size):
        self.image_size = image_size

    def get_loss(self, estimate, label):
        return (estimate - label).abs().sum() / self.image_size


def prepare_data(images, labels):
    images = torch.tensor(images, requires_grad=True)
    labels = torch.tensor(labels)
    return images, labels


def saliency(net, dataset):
    loss_function = LineDistanceLoss(64)
    images, labels = prepare_data(*dataset.sample())
    prediction = net(images.permute(0, 3, 1, 2))
    loss = sum(loss_function.get_loss(prediction[b], labels[b]) for b in range(labels.size(0)))
    loss.backward()
    return images.grad.abs().amax(-1)
