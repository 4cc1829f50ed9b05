"""The training loop of the package."""


def fit(model, optimizer, loader, epochs):
    for _ in range(epochs):
        for x, y in loader:
            loss = model.loss(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
