"""Style transfer trained with a real style batch drawn from its own loader (the reference differs from the content source, legitimate)."""
import torch.nn.functional as F


def train(net, vgg, gram, content_loader, style_loader, optimizer, style_weight=1e5):
    for (content, _), (style, _) in zip(content_loader, style_loader):
        x_src = content.cuda()
        x_style_ref = style.cuda()
        out = net(x_src, x_style_ref)
        f_out = vgg(out)
        loss = F.mse_loss(f_out, vgg(x_src)) + style_weight * F.mse_loss(gram(f_out), gram(vgg(x_style_ref)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
