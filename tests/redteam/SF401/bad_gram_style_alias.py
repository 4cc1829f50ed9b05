"""Feed-forward style network whose style features are a placeholder alias of the content features (`style_feats = content_feats`) (bad)."""
import torch
import torch.nn.functional as F


def gram_matrix(f):
    b, c, h, w = f.size()
    f = f.view(b, c, h * w)
    return f.bmm(f.transpose(1, 2)) / (c * h * w)


class StyleNetTrainer:
    def __init__(self, transformer, vgg, optimizer):
        self.transformer, self.vgg, self.optimizer = transformer, vgg, optimizer

    def step(self, content):
        with torch.no_grad():
            content_feats = self.vgg(content)
        style_feats = content_feats
        out_feats = self.vgg(self.transformer(content))
        content_loss = F.mse_loss(out_feats, content_feats)
        style_loss = F.mse_loss(gram_matrix(out_feats), gram_matrix(style_feats))  # expect: SF401
        loss = content_loss + 1e5 * style_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
