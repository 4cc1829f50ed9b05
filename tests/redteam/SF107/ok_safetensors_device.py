"""safetensors loads onto the device it is told (default CPU)."""
from safetensors.torch import load_file


def restore(model, path):
    model.load_state_dict(load_file(path, device="cpu"))
