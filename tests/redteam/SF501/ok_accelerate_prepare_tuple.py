"""accelerate: loaders prepared together with the model, optimizer and scheduler."""
from accelerate import Accelerator
from torch.utils.data import DataLoader


def train(cfg, model, optimizer, scheduler, train_ds, eval_ds):
    accelerator = Accelerator(gradient_accumulation_steps=cfg.accum)
    train_dl = DataLoader(train_ds, shuffle=True, batch_size=cfg.bs)
    eval_dl = DataLoader(eval_ds, batch_size=cfg.bs)
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(
        model, optimizer, train_dl, eval_dl, scheduler
    )
    for epoch in range(cfg.epochs):
        for batch in train_dl:
            with accelerator.accumulate(model):
                accelerator.backward(model(**batch).loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
