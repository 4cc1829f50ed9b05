"""Mined shape: an evaluate() over a text dataset sums criterion tensors into `epoch_loss` with autograd on and only prints the sum (bad)."""


def accuracy(preds, y):
    return (preds.argmax(1) == y).float().mean()


def evaluate(model, criterion, batches):
    epoch_acc = 0.0
    epoch_loss = 0.0
    for batch in batches:
        preds = model(batch.text)
        loss = criterion(preds, batch.label)
        epoch_acc += accuracy(preds, batch.label)
        epoch_loss += loss  # expect: SF103
    print(f"test accuracy {epoch_acc / len(batches)}, loss {epoch_loss / len(batches)}")
    return epoch_acc / len(batches)
