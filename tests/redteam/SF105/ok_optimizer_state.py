"""An Adagrad-like optimizer keeps per-parameter sums in its state: that state belongs with the parameters."""
import torch


class MyAdagrad(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, eps=1e-10):
        super().__init__(params, dict(lr=lr, eps=eps))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "sum" not in state:
                    state["sum"] = torch.zeros_like(p)
                state["sum"].addcmul_(p.grad, p.grad, value=1)
                p.addcdiv_(p.grad, state["sum"].sqrt().add_(group["eps"]), value=-group["lr"])
