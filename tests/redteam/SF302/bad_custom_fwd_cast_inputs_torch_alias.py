"""A fused op declares its AMP behaviour with the legacy decorators through a torch alias."""
import torch as th


class FusedGelu(th.autograd.Function):
    @staticmethod
    @th.cuda.amp.custom_fwd(cast_inputs=th.float32)  # expect: SF302
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return th.nn.functional.gelu(x)

    @staticmethod
    @th.cuda.amp.custom_bwd  # expect: SF302
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * th.sigmoid(1.702 * x)
