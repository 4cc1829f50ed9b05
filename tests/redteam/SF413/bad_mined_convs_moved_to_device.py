"""Mined (text CNN): each conv moved to the device by hand inside a plain list, since .to() on the model misses them."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ConvText(nn.Module):
    def __init__(self, vocab, dim, out_ch, sizes, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs = [nn.Conv1d(dim, out_ch, kernel_size=k).to(device) for k in sizes]  # expect: SF413
        self.fc = nn.Linear(len(sizes) * out_ch, hidden)

    def forward(self, ids):
        x = self.embedding(ids).transpose(1, 2)
        return self.fc(torch.cat([c(x).amax(-1) for c in self.convs], 1))
