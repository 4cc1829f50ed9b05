"""CycleGAN identity loss: G_AB(real_B) is pulled toward real_B on purpose, next to cycle losses on different reconstructions (legitimate)."""
import torch.nn as nn


class CycleLosses:
    def __init__(self, G_AB, G_BA, lambda_cyc=10.0, lambda_id=5.0):
        self.G_AB, self.G_BA = G_AB, G_BA
        self.l1 = nn.L1Loss()
        self.lambda_cyc, self.lambda_id = lambda_cyc, lambda_id

    def __call__(self, real_A, real_B):
        idt_B = self.G_AB(real_B)
        idt_A = self.G_BA(real_A)
        loss_idt = self.l1(idt_B, real_B) + self.l1(idt_A, real_A)
        rec_A = self.G_BA(self.G_AB(real_A))
        rec_B = self.G_AB(self.G_BA(real_B))
        loss_cycle = self.l1(rec_A, real_A) + self.l1(rec_B, real_B)
        return self.lambda_cyc * loss_cycle + self.lambda_id * loss_idt
