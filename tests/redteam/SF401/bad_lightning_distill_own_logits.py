"""Lightning self-distillation where the "teacher" target is the student's own output cloned (`teacher_logits = logits.clone().detach()`), so the KD term is zero (bad)."""
import torch
import torch.nn.functional as F
import lightning as L


class SelfDistill(L.LightningModule):
    def __init__(self, student, teacher, T=2.0):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.T = T

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.student(x)
        teacher_logits = logits.clone().detach()
        kd_loss = F.kl_div(F.log_softmax(logits / self.T, -1), F.softmax(teacher_logits / self.T, -1), reduction="batchmean")  # expect: SF401
        loss = F.cross_entropy(logits, y) + kd_loss
        self.log("kd", kd_loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.student.parameters(), lr=0.05)
