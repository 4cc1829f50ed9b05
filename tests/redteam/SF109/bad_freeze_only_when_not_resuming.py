"""The base is frozen in the `else` branch only: resumed runs train everything."""
import torch
import loralib as lora


def build(model, ckpt, resume):
    model.head = lora.Linear(512, 512, r=16)
    if resume:
        model.load_state_dict(torch.load(ckpt, map_location="cpu"), strict=False)
    else:
        lora.mark_only_lora_as_trainable(model)
    return torch.optim.Adam(model.parameters(), lr=1e-3)  # expect: SF109
