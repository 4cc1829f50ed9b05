"""An amp script: the validation loss goes through the scaler's backward too."""
import torch

scaler = torch.amp.GradScaler("cuda")
for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    model.eval()
    for x, y in val_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            val_loss = criterion(model(x), y)
        scaler.scale(val_loss).backward()  # expect: SF419
