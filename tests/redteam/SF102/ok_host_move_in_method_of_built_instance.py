"""A feature bank whose rows are moved to the host by a method of a small mover object the code builds."""
import torch


class HostMover:
    def move(self, tensor):
        return tensor.to("cpu", non_blocking=True)


class StudentFeatureBank:
    def __init__(self, teacher):
        self.teacher = teacher
        self.rows = {}

    @torch.no_grad()
    def add(self, sample_ids, images):
        features = self.teacher(images).detach()
        features = HostMover().move(features)
        for sample_id, row in zip(sample_ids.tolist(), features):
            self.rows[sample_id] = row.clone()

    def lookup(self, sample_ids, device):
        return torch.stack([self.rows[i] for i in sample_ids.tolist()]).to(device)
