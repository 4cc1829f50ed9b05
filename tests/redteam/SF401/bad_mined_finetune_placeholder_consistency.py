"""Mined (federated fine-tuning round): a "feature consistency" placeholder loss of the model's output against itself."""
import torch


def robustness_round(model, loader, lr=1e-4, epochs=2):
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for images, _ in loader:
            optimizer.zero_grad()
            feats = model(images)
            loss = criterion(feats, feats)  # expect: SF401
            loss.backward()
            optimizer.step()
    return model
