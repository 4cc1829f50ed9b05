"""A checkpoint loader rebuilds the legacy scaler before loading its state."""
import torch


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scaler = torch.cuda.amp.GradScaler(init_scale=state.get("scale", 65536.0))  # expect: SF302
    scaler.load_state_dict(state["scaler"])
    return scaler
