"""Fine-tuning: the dataset calls the tokenizer it was handed on every row; the batch is a dict moved key by key."""
import torch
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, texts, labels, tokenizer):
        self.texts = texts
        self.labels = labels
        self.tokenizer = tokenizer

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        enc = self.tokenizer(self.texts[idx], padding="max_length", truncation=True, max_length=128,
                             return_tensors="pt")
        item = {k: v.squeeze(0) for k, v in enc.items()}
        item["labels"] = torch.tensor(self.labels[idx])
        return item


def fine_tune(model, tokenizer, texts, labels, device="cuda"):
    loader = DataLoader(Reviews(texts, labels, tokenizer), batch_size=16, shuffle=True)  # expect: SF206
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model.to(device)
    model.train()
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
