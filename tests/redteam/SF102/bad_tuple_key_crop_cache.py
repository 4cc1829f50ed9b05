"""Detector trainer memoising frozen-backbone features per (image_id, scale) tuple key, detached on the GPU (bad)."""
import torch


class MultiScaleFeatureCache:
    def __init__(self, backbone):
        self.backbone = backbone.eval()
        self._feats = dict()

    def __call__(self, image_id, image, scale):
        key = (image_id, scale)
        if key not in self._feats:
            resized = torch.nn.functional.interpolate(image[None], scale_factor=scale, mode="bilinear")
            self._feats[key] = self.backbone(resized).detach()  # expect: SF102
        return self._feats[key]


def train(head, cache, loader, optimizer, scales=(0.5, 1.0, 2.0)):
    for image_ids, images, targets in loader:
        loss = 0.0
        for s in scales:
            feats = torch.cat([cache(i, img, s) for i, img in zip(image_ids, images)])
            loss = loss + head(feats, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
