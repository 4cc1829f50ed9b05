"""Mined (a robot-policy experiment script): a flag casts the model with half(), Adam is built over it, and a library's training-loop object runs the steps."""
import torch

settings = {"lr": 1e-3, "half_precision": True}
if settings["half_precision"]:
    policy = policy.half()  # expect: SF305
optimizer = torch.optim.Adam(policy.parameters(), lr=settings["lr"], eps=1e-4)
loop = TrainingLoop(model=policy, optimizer=optimizer, criterion=criterion, epochs=10)
loop.training_loop(train_loader=train_loader, val_loader=val_loader)
