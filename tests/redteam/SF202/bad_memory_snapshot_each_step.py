"""allocator snapshot dumped on every step by a per-batch hook of a callback (bad)."""
import pickle

import torch
from transformers import TrainerCallback


class MemoryTrace(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        snap = torch.cuda.memory._snapshot()  # expect: SF202
        with open(f"mem_{state.global_step}.pkl", "wb") as fh:
            pickle.dump(snap, fh)
