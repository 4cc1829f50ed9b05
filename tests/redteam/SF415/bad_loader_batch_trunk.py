"""Training script: the image batch goes straight into a checkpointed trunk (old default)."""
import torch
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
for images, labels in train_loader:
    images, labels = images.cuda(), labels.cuda()
    feats = checkpoint(net.features, images)  # expect: SF415
    loss = torch.nn.functional.cross_entropy(net.classifier(feats), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
