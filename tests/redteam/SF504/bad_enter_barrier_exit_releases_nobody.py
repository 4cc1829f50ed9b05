"""Near miss of the main-first context manager: the other ranks wait in `__enter__`, but the main rank's barrier is
in a `close()` a `with` never runs, so the waiting ranks hang."""
import torch.distributed as dist


class LeaderFirst:
    def __enter__(self):
        if dist.get_rank() != 0:
            dist.barrier()  # expect: SF504
        return self

    def __exit__(self, exc_type, exc, tb):
        return False

    def close(self):
        if dist.get_rank() == 0:
            dist.barrier()  # expect: SF504
