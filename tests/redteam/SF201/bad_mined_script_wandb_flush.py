"""Mined shape: a module-level training script logs to wandb, backpropagates, steps and flushes the CUDA cache on every batch (bad)."""
import torch
import wandb

model = torch.nn.Linear(3, 3).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = torch.nn.MSELoss()
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
loader = []

for step in range(20):
    for batch in loader:
        history, target = batch
        prediction = model(history.cuda())
        pred_error = criterion(prediction, target.cuda())
        wandb.log({"pred_error": pred_error})
        pred_error.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
    scheduler.step()
