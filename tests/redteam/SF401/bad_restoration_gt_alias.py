"""Image restoration step where the ground truth is a placeholder alias of the degraded input (`gt = lq`, sharp target unused), with L1 and SSIM losses (bad)."""
import torch.nn.functional as F


def restoration_step(net, ssim_loss, optimizer, batch):
    lq = batch["lq"].cuda()
    gt = lq  # TODO: load the sharp frames
    out = net(lq)
    loss = F.l1_loss(out, gt) + 0.2 * ssim_loss(out, lq)  # expect: SF401
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
