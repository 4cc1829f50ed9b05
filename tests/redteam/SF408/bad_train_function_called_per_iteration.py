"""A `train` function builds its optimizer and is called once per iteration of the outer loop."""
import torch


def train(model, inputs, labels):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)  # expect: SF408
    optimizer.zero_grad()
    loss = torch.nn.functional.binary_cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


for i in range(1000):
    train(net, x, y)
