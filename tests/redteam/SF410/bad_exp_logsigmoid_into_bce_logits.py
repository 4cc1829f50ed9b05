"""A reward model computes probabilities as exp(logsigmoid) for numerical stability, then hands them to BCEWithLogitsLoss: the sigmoid is applied twice."""
import torch
import torch.nn.functional as F


def train_reward(model, pairs, optimizer):
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for chosen, rejected, label in pairs:
        margin = model(chosen) - model(rejected)
        prob = F.logsigmoid(margin).exp()
        loss = loss_fn(prob, label)  # expect: SF410
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
