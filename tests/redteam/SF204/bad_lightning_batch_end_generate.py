"""LightningModule generating a summary in on_train_batch_end on every batch (bad)."""
import lightning.pytorch as pl


class Summarizer(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.t5(**batch).loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        summary_ids = self.t5.generate(batch["input_ids"][:1], num_beams=2, max_new_tokens=48)  # expect: SF204
        self.print(self.tokenizer.decode(summary_ids[0], skip_special_tokens=True))
