"""Offline embedding extraction over shards: empty_cache() per shard, but nothing is trained (no backward, no optimizer)."""
import numpy as np
import torch


@torch.no_grad()
def embed_shards(encoder, shards, out_dir, batch_size=512):
    encoder.eval().cuda()
    for i, shard in enumerate(shards):
        outs = []
        for start in range(0, len(shard), batch_size):
            batch = torch.as_tensor(shard[start:start + batch_size]).cuda()
            outs.append(encoder(batch).float().cpu().numpy())
        np.save(f"{out_dir}/shard_{i:05d}.npy", np.concatenate(outs))
        torch.cuda.empty_cache()
