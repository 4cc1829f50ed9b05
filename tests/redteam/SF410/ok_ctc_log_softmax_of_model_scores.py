"""Speech recogniser: `log_softmax` of raw scores from a model whose forward ends in a linear layer, into `F.ctc_loss` (correct)."""
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(80, 256)
        self.out = nn.Linear(256, 30)

    def forward(self, feats):
        h, _ = self.rnn(feats)
        return self.out(h)


enc = Encoder()
for feats, targets, in_lens, tgt_lens in loader:
    log_probs = F.log_softmax(enc(feats), dim=-1)
    loss = F.ctc_loss(log_probs, targets, in_lens, tgt_lens, zero_infinity=True)
    loss.backward()
