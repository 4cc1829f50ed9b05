"""Mined shape: a segmentation trainer's shared train/valid step moves each batch's mask and region of interest to the
GPU and calls `requires_grad_(True)` on both before handing them to the criterion it was built with; the mask is
also turned into bytes for a confusion matrix (bad: nothing reads the target's gradient)."""
import torch


class SegmentationTrainer:
    def __init__(self, net, criterion, optimizer, use_cuda=True, threshold=0.5):
        self.net = net
        self.criterion = criterion
        self.optimizer = optimizer
        self.use_cuda = use_cuda
        self.threshold = threshold

    def run_loader(self, loader, training=True):
        self.net.train(training)
        hits, seen = 0, 0
        for images, mask, roi in loader:
            if self.use_cuda:
                images, mask, roi = images.cuda(), mask.cuda(non_blocking=True), roi.cuda(non_blocking=True)
            mask.requires_grad_(True)  # expect: SF101
            roi.requires_grad_(True)
            torch.set_grad_enabled(training)
            logits = self.net(images)
            loss = self.criterion(logits, mask, roi=roi)
            predicted = torch.sigmoid(logits) > self.threshold
            hits += (predicted.byte() == mask.byte()).sum().item()
            seen += mask.numel()
            if training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return hits / max(seen, 1)
