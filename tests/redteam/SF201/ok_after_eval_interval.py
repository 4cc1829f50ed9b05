"""One empty_cache() right after the periodic evaluation inside the training loop (phase boundary behind an interval)."""
import torch


@torch.no_grad()
def evaluate(model, val_loader):
    model.eval()
    total = sum(torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).item() for x, y in val_loader)
    model.train()
    return total / len(val_loader)


def train(model, loader, val_loader, optimizer, eval_every=500):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step > 0 and step % eval_every == 0:
            print("val", evaluate(model, val_loader))
            torch.cuda.empty_cache()
