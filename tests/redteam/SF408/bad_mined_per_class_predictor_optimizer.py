"""Mined (random-network-distillation classifier): each batch activates one predictor head and builds a new Adam over it."""
import torch.nn.functional as F
from torch import optim


def train_epoch(rnd, loader, device, epoch):
    rnd.train()
    for step, (x, y) in enumerate(loader):
        x = x.view(x.shape[0], -1).to(device)
        rnd.activate_predictor(y.item())
        pred_feat, target_feat = rnd(x)
        loss = F.mse_loss(pred_feat, target_feat).mean()
        opt = optim.Adam(list(rnd.active_predictor.parameters()), lr=0.001)  # expect: SF408
        opt.zero_grad()
        loss.backward()
        opt.step()
