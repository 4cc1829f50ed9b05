"""Mined shape: eval_fn() switches to eval, moves each dict batch to the device, unpacks (preds, loss) = model(**data) and keeps every batch's predictions (bad)."""
from tqdm import tqdm

DEVICE = "cuda"


def eval_fn(model, data_loader):
    model.eval()
    fin_loss = 0
    fin_preds = []
    bar = tqdm(data_loader, total=len(data_loader))
    for data in bar:
        for key, value in data.items():
            data[key] = value.to(DEVICE)
        batch_preds, loss = model(**data)  # expect: SF106
        fin_loss += loss.item()
        fin_preds.append(batch_preds)
    return fin_preds, fin_loss / len(data_loader)
