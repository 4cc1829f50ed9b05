"""pix2pix generator step: GAN loss on the (input, fake) pair and L1 toward the paired real target (legitimate)."""
import torch
import torch.nn as nn


class Pix2Pix:
    def __init__(self, netG, netD, opt_g, lambda_l1=100.0):
        self.netG, self.netD, self.opt_g = netG, netD, opt_g
        self.criterion_gan = nn.BCEWithLogitsLoss()
        self.criterion_l1 = nn.L1Loss()
        self.lambda_l1 = lambda_l1

    def generator_step(self, real_A, real_B):
        fake_B = self.netG(real_A)
        pred_fake = self.netD(torch.cat((real_A, fake_B), 1))
        loss_gan = self.criterion_gan(pred_fake, torch.ones_like(pred_fake))
        loss_l1 = self.criterion_l1(fake_B, real_B)
        loss = loss_gan + self.lambda_l1 * loss_l1
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()
        return loss.item()
