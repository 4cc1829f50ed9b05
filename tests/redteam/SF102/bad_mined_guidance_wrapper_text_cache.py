"""Mined shape: a guided-sampling wrapper around a diffusion pipeline keeps an annotated `Dict[str, Tensor]` of text
embeddings on `self`; when caching is switched on, each new prompt is encoded under no_grad, moved to the wrapper's
device and dtype, and stored under the prompt for good (bad: one device tensor per distinct prompt)."""
from typing import Dict

import torch


class GuidedSampler:
    def __init__(self, pipeline, device, dtype=torch.float16, cache_text=True):
        self.device = torch.device(device)
        self.dtype = dtype
        self.cache_text = cache_text
        self.text_memo: Dict[str, torch.Tensor] = {}
        self.pipeline = pipeline.to(self.device)
        for part in (pipeline.unet, pipeline.text_encoder):
            part.requires_grad_(False)

    def text_condition(self, prompt: str) -> torch.Tensor:
        if self.cache_text and prompt in self.text_memo:
            return self.text_memo[prompt]
        tokens = self.pipeline.tokenizer([prompt], padding="max_length", return_tensors="pt")
        tokens = {name: value.to(self.device) for name, value in tokens.items()}
        with torch.no_grad():
            condition = self.pipeline.text_encoder(**tokens)[0].to(self.device, self.dtype)
        if self.cache_text:
            self.text_memo[prompt] = condition  # expect: SF102
        return condition

    def guided(self, prompt, latents, guidance_loss, steps, step_size):
        condition = self.text_condition(prompt)
        for t in self.pipeline.scheduler.timesteps[:steps]:
            latents.requires_grad_(True)
            with torch.no_grad():
                noise = self.pipeline.unet(latents, t, encoder_hidden_states=condition).sample
                latents = self.pipeline.scheduler.step(noise, t, latents).prev_sample
            guidance_loss(latents).backward()
            latents = (latents - step_size * latents.grad).detach()
        return latents
