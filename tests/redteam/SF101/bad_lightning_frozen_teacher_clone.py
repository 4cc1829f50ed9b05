"""Lightning feature distillation: the frozen teacher's embeddings are cloned with requires_grad_(True) and only matched by cosine-embedding loss (bad)."""
import torch
import torch.nn as nn
import lightning.pytorch as pl


class EmbedDistill(pl.LightningModule):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher.eval().requires_grad_(False)
        self.loss = nn.CosineEmbeddingLoss()

    def training_step(self, batch, batch_idx):
        tokens = batch["input_ids"]
        with torch.no_grad():
            t_emb = self.teacher(tokens)
        t_emb = t_emb.clone().requires_grad_(True)  # expect: SF101
        s_emb = self.student(tokens)
        ones = torch.ones(s_emb.size(0), device=s_emb.device)
        loss = self.loss(s_emb, t_emb, ones)
        self.log("train/distill", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.student.parameters(), lr=1e-4)
