"""Module-level memo of generated token ids per prompt stored as Python lists via .tolist() (not tensors)."""
import torch

_COMPLETIONS = {}


@torch.no_grad()
def cached_completion(model, tokenizer, prompt, max_new_tokens=32):
    if prompt not in _COMPLETIONS:
        ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)
        out = model.generate(ids, max_new_tokens=max_new_tokens)
        _COMPLETIONS[prompt] = out[0, ids.shape[1]:].tolist()
    return _COMPLETIONS[prompt]
