"""A DeepSpeed comm barrier reached only by global rank 0."""

import deepspeed.comm as comm


def finish(engine, tag):
    if engine.global_rank == 0:
        engine.save_checkpoint("ckpt", tag=tag)
        comm.barrier()  # expect: SF504
