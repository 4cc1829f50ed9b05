"""Style-transfer step unpacking `x_src, x_style = batch["content"], batch["content"]` (copy-paste): style and content references are one tensor (bad)."""
import torch.nn.functional as F


def gram(f):
    b, c, h, w = f.shape
    f = f.flatten(2)
    return f @ f.transpose(1, 2) / (c * h * w)


def train_step(net, vgg, optimizer, batch, style_weight=10.0):
    x_src, x_style = batch["content"], batch["content"]
    out = net(x_src, x_style)
    content_loss = F.mse_loss(vgg(out), vgg(x_src))
    style_loss = F.mse_loss(gram(vgg(out)), gram(vgg(x_style)))  # expect: SF401
    loss = content_loss + style_weight * style_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
