"""A context manager for "the main process goes first" (downloads, cache builds): the other ranks wait at a barrier
in `__enter__`, the main rank reaches its barrier in `__exit__`. A `with` runs both methods on every rank, so each
rank calls the barrier once and they meet (the shape of avalanche's distributed helper, paraphrased)."""
import torch.distributed as dist


def is_leader():
    return dist.get_rank() == 0


class LeaderFirst:
    def __init__(self, sync_at_end=False):
        self.sync_at_end = sync_at_end

    def __enter__(self):
        if not is_leader():
            dist.barrier()
        return self

    def __exit__(self, exc_type, exc, tb):
        if is_leader():
            dist.barrier()
        if self.sync_at_end:
            dist.barrier()


def prepare(download):
    with LeaderFirst():
        return download()
