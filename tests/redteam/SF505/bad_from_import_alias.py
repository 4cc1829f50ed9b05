"""DistributedDataParallel imported from torch.nn.parallel.distributed under an alias."""
from torch import save as save_checkpoint
from torch.nn.parallel.distributed import DistributedDataParallel as Parallel


def export(model, rank, path):
    model = Parallel(model, device_ids=[rank])
    save_checkpoint(model.state_dict(), path)  # expect: SF505
