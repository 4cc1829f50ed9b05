"""State saved to a temporary file and restored in the same call (an LR-finder style dry run)."""
import tempfile
from pathlib import Path

import torch


def dry_run(trainer, model, optimizer, run):
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "state.pt"
        torch.save({"model": model.state_dict(), "opt": optimizer.state_dict()}, cache.as_posix())
        run(trainer)
        state = torch.load(cache.as_posix(), weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["opt"])
