"""`zeros_like` imported under another name; buffers summed over micro-batches of one update."""
from torch import zeros_like as zl


class Probe:
    def grad_dot(self, micro_a, micro_b):
        params = [p for p in self.policy.parameters() if p.requires_grad]
        ga = [zl(p) for p in params]  # expect: SF105
        gb = [zl(p) for p in params]  # expect: SF105
        for mb in micro_a:
            self.policy.zero_grad()
            self.objective(mb).backward()
            for a, p in zip(ga, params):
                a.add_(p.grad)
        for mb in micro_b:
            self.policy.zero_grad()
            self.objective(mb).backward()
            for b, p in zip(gb, params):
                b.add_(p.grad)
        return sum((a * b).sum() for a, b in zip(ga, gb)).item()
