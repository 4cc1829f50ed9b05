"""Lightning module sampling once per epoch in on_train_epoch_end (ok)."""
import lightning.pytorch as pl


class LM(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.net(**batch).loss

    def on_train_epoch_end(self):
        ids = self.net.generate(self.prompt_ids, max_new_tokens=40)
        self.print(self.tok.decode(ids[0]))
