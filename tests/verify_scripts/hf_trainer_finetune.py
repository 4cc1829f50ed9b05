"""Fine-tune a tiny BERT classifier with the Hugging Face Trainer, as a user writes it.

The model is built from a config (no download) and the data are generated, so this runs offline in
seconds: `python hf_trainer_finetune.py --max-steps 20`.
"""

import argparse
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class ParityDataset(Dataset):
    """Random token sequences labelled by whether token 7 occurs an odd number of times."""

    def __init__(self, size, seq_len, vocab_size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.input_ids = torch.randint(0, vocab_size, (size, seq_len), generator=generator)
        self.labels = ((self.input_ids == 7).sum(dim=1) % 2).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        ids = self.input_ids[index]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": self.labels[index]}


class LoggingTrainer(Trainer):
    """Keeps the per-batch losses for a plot at the end of training."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batch_losses = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        self.batch_losses.append(loss.item())
        return (loss, outputs) if return_outputs else loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--accumulation", type=int, default=2)
    args = parser.parse_args()

    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, num_labels=2)
    model = BertForSequenceClassification(config)
    dataset = ParityDataset(size=512, seq_len=16, vocab_size=config.vocab_size, seed=0)

    with tempfile.TemporaryDirectory() as output_dir:
        training_args = TrainingArguments(
            output_dir=output_dir,
            max_steps=args.max_steps,
            per_device_train_batch_size=args.batch_size,
            gradient_accumulation_steps=args.accumulation,
            learning_rate=args.lr,
            max_grad_norm=1.0,
            warmup_steps=2,
            logging_steps=5,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            disable_tqdm=True,
            dataloader_num_workers=0,
            seed=0,
        )
        trainer = LoggingTrainer(model=model, args=training_args, train_dataset=dataset)
        result = trainer.train()
    print(f"trained {result.global_step} steps, final loss {result.training_loss:.4f}")


if __name__ == "__main__":
    main()
