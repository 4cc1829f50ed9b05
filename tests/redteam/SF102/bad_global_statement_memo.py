"""Module-level memo filled through a `global` statement: text embeddings computed under no_grad are kept on the GPU per prompt, forever (bad)."""
import torch

_PROMPT_EMB = {}


def encode_prompt(text_encoder, tokenizer, prompt, device="cuda"):
    global _PROMPT_EMB
    if prompt in _PROMPT_EMB:
        return _PROMPT_EMB[prompt]
    ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
    with torch.no_grad():
        emb = text_encoder(ids)[0]
    _PROMPT_EMB[prompt] = emb  # expect: SF102
    return emb


def train(unet, text_encoder, tokenizer, loader, optimizer):
    for batch in loader:
        cond = torch.cat([encode_prompt(text_encoder, tokenizer, p) for p in batch["prompts"]])
        loss = unet(batch["latents"].cuda(), cond).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
