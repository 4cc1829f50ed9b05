"""CycleGAN generator step where the B-cycle loss compares the reconstruction with itself (copy-paste typo: rec_B twice, bad)."""
import torch
import torch.nn as nn


class CycleGANTrainer:
    def __init__(self, G_AB, G_BA, D_A, D_B, opt_g, lambda_cyc=10.0):
        self.G_AB, self.G_BA, self.D_A, self.D_B = G_AB, G_BA, D_A, D_B
        self.opt_g = opt_g
        self.criterion_gan = nn.MSELoss()
        self.criterion_cycle = nn.L1Loss()
        self.lambda_cyc = lambda_cyc

    def generator_step(self, real_A, real_B):
        fake_B = self.G_AB(real_A)
        fake_A = self.G_BA(real_B)
        pred_B, pred_A = self.D_B(fake_B), self.D_A(fake_A)
        loss_gan = self.criterion_gan(pred_B, torch.ones_like(pred_B)) + self.criterion_gan(pred_A, torch.ones_like(pred_A))
        rec_A = self.G_BA(fake_B)
        rec_B = self.G_AB(fake_A)
        loss_cycle_A = self.criterion_cycle(rec_A, real_A)
        loss_cycle_B = self.criterion_cycle(rec_B, rec_B)  # expect: SF401
        loss = loss_gan + self.lambda_cyc * (loss_cycle_A + loss_cycle_B)
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()
        return loss.item()
