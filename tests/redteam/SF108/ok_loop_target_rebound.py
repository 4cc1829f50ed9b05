"""The loop's own target re-bound by a helper each iteration is fresh data, not carried state."""


def train(model, loader, opt, move_to_device):
    for step, batch in enumerate(loader):
        batch = move_to_device(batch, model.device)
        loss = model(**batch).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
