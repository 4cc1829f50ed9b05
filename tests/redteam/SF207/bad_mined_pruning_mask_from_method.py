"""Paraphrase of a mined masked convolution: the weight mask comes from a method of the class (a host
tensor filled in a loop) and is moved to the input's device in every forward."""
import torch
import torch.nn as nn


class MaskedConv(nn.Conv2d):
    def __init__(self, cin, cout, k):
        super().__init__(cin, cout, k, padding=k // 2)
        self.mask = self.build_mask()

    def build_mask(self):
        mask = torch.zeros(self.out_channels, self.in_channels, *self.kernel_size)
        for i in range(self.kernel_size[0] // 2 + 1):
            mask[:, :, i, :] = 1
        return mask

    def forward(self, x):
        weight = self.weight * self.mask.to(x.device)  # expect: SF207
        return nn.functional.conv2d(x, weight, self.bias, self.stride, self.padding)
