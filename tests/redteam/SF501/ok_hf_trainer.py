"""HF Trainer runs the loop (it shards); a preview loader is only peeked at."""
import os

from torch.utils.data import DataLoader
from transformers import Trainer, TrainingArguments


def main(model, train_ds, collate):
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, local_rank=local_rank)
    preview = DataLoader(train_ds, batch_size=4, collate_fn=collate)
    print(next(iter(preview)))
    trainer = Trainer(model=model, args=args, train_dataset=train_ds, data_collator=collate)
    trainer.train()
