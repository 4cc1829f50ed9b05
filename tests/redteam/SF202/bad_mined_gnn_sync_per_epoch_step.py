"""Mined shape: a full-graph train() synchronises the device after every optimizer step ("force sync so all GPU work is done") (bad)."""
import torch


def train(model, data, optimizer, loss_fn, epochs=100, device="cuda"):
    model.train()
    data = data.to(device)
    for epoch in range(epochs):
        optimizer.zero_grad()
        output = model(data)
        loss = loss_fn(output[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()  # expect: SF202
