"""A config flag casts the whole model to half before the optimizer is built; nothing scales the loss."""
import torch


def main(cfg, loader):
    model = build_model(cfg)
    if cfg.fp16:
        model = model.half()  # expect: SF305
    model.cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    for epoch in range(cfg.epochs):
        for batch in loader:
            inputs = batch["x"].cuda().half() if cfg.fp16 else batch["x"].cuda()
            loss = model(inputs).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
