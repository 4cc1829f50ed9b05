"""Mined shape: an image-restoration diffusion trainer keeps a `dict({})` of prompt embeddings on `self`; each new
prompt of a training batch is tokenized onto the device, run through the frozen text encoder and a `.clone()` of
its output is stored under the prompt, never moved to the CPU or cleared (bad: one device tensor per prompt seen)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RestorationTrainer(nn.Module):
    def __init__(self, tokenizer, text_encoder, denoiser, device, lr=5e-5):
        super().__init__()
        self.device = device
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder.to(device)
        self.text_encoder.requires_grad_(False)
        self.denoiser = denoiser.to(device)
        self.optimizer = torch.optim.AdamW(self.denoiser.parameters(), lr=lr)
        self.embeds_by_prompt = dict({})

    def encode_prompts(self, prompts):
        embeds = []
        for prompt in prompts:
            if prompt in self.embeds_by_prompt:
                embeds.append(self.embeds_by_prompt[prompt])
                continue
            ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
            embeds.append(self.text_encoder(ids)[0])
            self.embeds_by_prompt[prompt] = embeds[-1].clone()  # expect: SF102
        return torch.cat(embeds, dim=0)

    def train_step(self, degraded, clean, prompts):
        degraded, clean = degraded.to(self.device), clean.to(self.device)
        noise = torch.randn_like(clean)
        prediction = self.denoiser(torch.cat([clean + noise, degraded], dim=1), self.encode_prompts(prompts))
        loss = F.mse_loss(prediction, noise)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()
