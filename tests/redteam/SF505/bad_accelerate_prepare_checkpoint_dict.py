"""An accelerate fine-tuning script saves a checkpoint dict with the prepared model's state dict: `module.` keys on multi-GPU runs."""
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification

accelerator = Accelerator(mixed_precision="bf16")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
for epoch in range(3):
    model.train()
    for batch in train_loader:
        outputs = model(**batch)
        accelerator.backward(outputs.loss)
        optimizer.step()
        optimizer.zero_grad()
    if accelerator.is_main_process:
        torch.save({"epoch": epoch, "model": model.state_dict(), "optim": optimizer.state_dict()}, f"ckpt_{epoch}.pt")  # expect: SF505
