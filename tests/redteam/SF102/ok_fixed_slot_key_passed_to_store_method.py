"""The latest features are kept under one slot: the storing method's key is a constant its only caller passes."""
import torch


class LatestCrops:
    def __init__(self, backbone):
        self.backbone = backbone.eval()
        self._slots = dict()

    def __call__(self, crop):
        slot = ("latest", 224)
        self._write(slot, crop)
        return self._slots[slot]

    def _write(self, slot, crop):
        self._slots[slot] = self.backbone(crop[None]).detach()
