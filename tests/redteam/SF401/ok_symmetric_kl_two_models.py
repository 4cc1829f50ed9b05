"""Deep mutual learning: two peer networks, each trained toward the other's detached prediction (swapped operands, different tensors, legitimate)."""
import torch.nn.functional as F


def mutual_step(net1, net2, opt1, opt2, x, y):
    logits1, logits2 = net1(x), net2(x)
    kl_1 = F.kl_div(F.log_softmax(logits1, -1), F.softmax(logits2.detach(), -1), reduction="batchmean")
    kl_2 = F.kl_div(F.log_softmax(logits2, -1), F.softmax(logits1.detach(), -1), reduction="batchmean")
    loss1 = F.cross_entropy(logits1, y) + kl_1
    loss2 = F.cross_entropy(logits2, y) + kl_2
    opt1.zero_grad()
    opt2.zero_grad()
    (loss1 + loss2).backward()
    opt1.step()
    opt2.step()
