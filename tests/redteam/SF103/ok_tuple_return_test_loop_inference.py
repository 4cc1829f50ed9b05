"""Near miss: the evaluation loop sums loss tensors under torch.inference_mode() and returns them with the accuracy
(no graph is recorded, legitimate)."""
import torch


def test_loop(model, dataloader, loss_fn, accuracy_fn, device):
    test_loss, test_acc = 0, 0
    model.eval()
    with torch.inference_mode():
        for x, y in dataloader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            test_loss += loss_fn(pred, y)
            test_acc += accuracy_fn(torch.argmax(pred, dim=1), y)
    return test_loss / len(dataloader), test_acc / len(dataloader)
