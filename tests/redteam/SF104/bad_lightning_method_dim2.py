"""Lightning training_step: method log_softmax over dim 2 bound to a name, torch.gather at dim 2 (bad)."""
import lightning.pytorch as pl
import torch


class CausalLM(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        logits = self.model(batch["input_ids"][:, :-1])
        lp = logits.log_softmax(dim=2)
        picked = torch.gather(lp, 2, batch["input_ids"][:, 1:].unsqueeze(2))  # expect: SF104
        loss = -picked.mean()
        self.log("train/nll", loss)
        return loss
