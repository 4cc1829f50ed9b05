"""`from safetensors.torch import load_file as restore`: a bare-named call that is not `torch.load` (safetensors
loads onto the CPU unless told otherwise) (ok)."""
from safetensors.torch import load_file as restore


def resume(model, path):
    state = restore(path)
    model.load_state_dict(state)
    return model.cuda()
