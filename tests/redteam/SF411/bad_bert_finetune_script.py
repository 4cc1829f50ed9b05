"""BERT fine-tuning script: `outputs[0]` loss, accumulation over `args.accum` batches, no division (bad)."""
import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for epoch in range(3):
    for step, batch in enumerate(train_loader):
        outputs = model(**batch)
        loss = outputs["loss"]
        loss.backward()  # expect: SF411
        if (step + 1) % args.accum == 0:
            optimizer.step()
            optimizer.zero_grad()
