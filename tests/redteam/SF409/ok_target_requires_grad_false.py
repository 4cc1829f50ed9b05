"""Teacher output detached as a target; the prediction is the live student output (correct)."""
import torch.nn.functional as F


def kd_step(student, teacher, x, opt, T=2.0):
    s = student(x)
    t = teacher(x).detach()
    loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
