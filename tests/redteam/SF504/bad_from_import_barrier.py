"""A barrier imported by name, reached only by rank 0 after building a cache."""

from torch.distributed import barrier, get_rank


def prepare_cache(build_cache):
    if get_rank() == 0:
        build_cache()
        barrier()  # expect: SF504
