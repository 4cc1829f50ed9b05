"""AMP loop: the clear sits between the scaled backward and the scaler step."""
import torch

scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(net(x), y)
    scaler.scale(loss).backward()
    net.zero_grad()  # expect: SF405
    scaler.step(opt)
    scaler.update()
