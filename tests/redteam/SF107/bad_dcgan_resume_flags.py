"""DCGAN example script: optional generator/discriminator weights from command-line paths."""
import argparse

import torch

from models import Discriminator, Generator

parser = argparse.ArgumentParser()
parser.add_argument("--netG", default="")
parser.add_argument("--netD", default="")
opt = parser.parse_args()
device = torch.device("cuda:0")

netG = Generator().to(device)
if opt.netG != "":
    netG.load_state_dict(torch.load(opt.netG))  # expect: SF107
netD = Discriminator().to(device)
if opt.netD != "":
    netD.load_state_dict(torch.load(opt.netD))  # expect: SF107
