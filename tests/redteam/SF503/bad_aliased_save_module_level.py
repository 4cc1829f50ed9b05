"""Module-level torchrun script with an aliased torch.save."""
import os

import torch
from torch import save as persist

local_rank = int(os.environ["LOCAL_RANK"])
torch.distributed.init_process_group("nccl")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8).cuda(local_rank))
persist(model.module.state_dict(), "final.pt")  # expect: SF503
