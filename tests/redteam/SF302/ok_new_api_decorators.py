"""The torch.amp decorators with an explicit device type."""
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x, s):
        ctx.s = s
        return x * s

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, g):
        return g * ctx.s, None
