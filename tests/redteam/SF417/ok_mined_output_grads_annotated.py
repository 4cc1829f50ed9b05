"""Mined (trainer mixin): a helper clips the gradients of outputs it is handed; what they are is the caller's business."""
from torch import Tensor
from torch.nn.utils import clip_grad_norm_


class Clipping:
    def __init__(self, model, grad_norm=None, out_grad_norm=None):
        self.model = model
        self.grad_norm = grad_norm
        self.out_grad_norm = out_grad_norm

    def maybe_clip_model_grads(self):
        if self.grad_norm is not None:
            clip_grad_norm_(self.model.parameters(), self.grad_norm)

    def maybe_clip_output_grads(self, outputs: Tensor):
        if self.out_grad_norm is not None:
            clip_grad_norm_(outputs, self.out_grad_norm)
