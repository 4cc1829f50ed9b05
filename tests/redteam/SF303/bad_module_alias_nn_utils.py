"""`import torch.nn.utils as nnu`: the clip goes through a module alias."""
import torch
import torch.nn.utils as nnu

scaler = torch.cuda.amp.GradScaler()
for images, labels in loader:
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = criterion(net(images), labels)
    scaler.scale(loss).backward()
    nnu.clip_grad_norm_(net.parameters(), 2.0)  # expect: SF303
    scaler.step(optimizer)
    scaler.update()
