"""accelerate fine-tuning where the model and optimizer go through prepare but the loader does not."""
from accelerate import Accelerator
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification


def training_function(config, tokenized):
    accelerator = Accelerator(mixed_precision="bf16")
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=2)
    optimizer = AdamW(model.parameters(), lr=config["lr"])
    train_dataloader = DataLoader(tokenized["train"], shuffle=True, batch_size=config["batch_size"])  # expect: SF501
    model, optimizer = accelerator.prepare(model, optimizer)
    for epoch in range(config["num_epochs"]):
        model.train()
        for batch in train_dataloader:
            batch = {k: v.to(accelerator.device) for k, v in batch.items()}
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            optimizer.zero_grad()
