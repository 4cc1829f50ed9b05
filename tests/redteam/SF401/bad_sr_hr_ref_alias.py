"""Super-resolution step: the HR reference is a placeholder alias of the LR input (`hr_ref = lr_up`), so both losses pull the output toward its own input (bad)."""
import torch.nn.functional as F


def sr_step(net, perceptual_loss, optimizer, lr_img, hr_img):
    lr_up = F.interpolate(lr_img, scale_factor=4, mode="bicubic")
    hr_ref = lr_up
    sr = net(lr_up)
    loss = F.l1_loss(sr, lr_up) + 0.1 * perceptual_loss(sr, hr_ref)  # expect: SF401
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
