"""Custom HF loop: `outputs.logits.data` re-enabled for grad before the loss (bad)."""
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.train()
    for batch in loader:
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        logits = outputs.logits.data.requires_grad_()  # expect: SF409
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
