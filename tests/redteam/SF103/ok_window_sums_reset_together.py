"""Token-weighted loss window: the running sums are logged with `.item()` and reset together in one tuple assignment."""
import torch.nn.functional as F


def fit(model, loader, optimizer, accumulation):
    window_loss, window_tokens = 0, 0
    for index, batch in enumerate(loader):
        tokens = (batch["labels"] != -100).sum()
        loss = F.cross_entropy(model(batch["input_ids"]).flatten(0, 1), batch["labels"].flatten(), reduction="sum")
        window_loss += loss
        window_tokens += tokens
        (loss / accumulation).backward()
        if (index + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            print(f"loss/token {window_loss.item() / window_tokens.item():.4f}")
            window_loss, window_tokens = 0, 0
