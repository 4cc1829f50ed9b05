"""CRNN text recogniser whose head ends in a softmax; the training loop takes `log_softmax` of it for
`nn.CTCLoss`, so the scores are normalised twice (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CRNN(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.rnn = nn.LSTM(64 * 16, 256, bidirectional=True)
        self.fc = nn.Linear(512, n_classes)

    def forward(self, images):
        feats = self.cnn(images).flatten(1, 2).permute(2, 0, 1)
        seq, _ = self.rnn(feats)
        return F.softmax(self.fc(seq), dim=2)


crnn = CRNN(37)
criterion = nn.CTCLoss(blank=0)
opt = torch.optim.Adam(crnn.parameters(), lr=1e-3)
for images, labels, label_lens in loader:
    preds = crnn(images)
    sizes = torch.full((images.size(0),), preds.size(0), dtype=torch.long)
    cost = criterion(F.log_softmax(preds, dim=2), labels, sizes, label_lens)  # expect: SF410
    opt.zero_grad()
    cost.backward()
    opt.step()
