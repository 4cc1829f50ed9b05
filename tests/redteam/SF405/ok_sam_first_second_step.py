"""SAM's two-step update clears inside `first_step`/`second_step` by design."""
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.first_step(zero_grad=True)
    criterion(model(x), y).backward()
    optimizer.second_step(zero_grad=True)
