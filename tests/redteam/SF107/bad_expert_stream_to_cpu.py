"""Downloaded expert models: weights copied into clones of a base model kept on the CPU."""
import copy

import torch


def load_experts(base_model, files):
    experts = []
    for fname in files:
        model = copy.deepcopy(base_model)
        weights = torch.load(fname)  # expect: SF107
        model.load_state_dict(weights)
        experts.append(model.to("cpu").eval())
    return experts
