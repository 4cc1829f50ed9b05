"""The paired-barrier idiom: the other ranks wait while rank 0 builds, then rank 0 releases them."""

import torch


def load_and_cache_examples(args, tokenizer, build):
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    dataset = build(tokenizer)
    if args.local_rank == 0:
        torch.distributed.barrier()
    return dataset
