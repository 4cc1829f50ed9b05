"""Mined shape: a frame-regression training function moves each batch to the GPU and sets `.requires_grad = True`
on both the frames and the labels before the forward, then hands the labels to the criterion it receives (bad:
the labels' gradient is never read)."""


def fit(model, criterion, optimizer, loader, epochs):
    for epoch in range(epochs):
        history = []
        for frames, labels in loader:
            frames, labels = frames.cuda(), labels.cuda()
            frames.requires_grad = True
            labels.requires_grad = True  # expect: SF101
            optimizer.zero_grad()
            loss = criterion(model(frames), labels)
            history.append(loss.item())
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: {sum(history) / len(history):.6f}")
