"""Near miss of bad_mined_prompt_embeds_dict_call: the prompt-embedding dict is re-created at the start of every
training step, so it only shares encodings between the samples of one batch (silent)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RestorationTrainer(nn.Module):
    def __init__(self, tokenizer, text_encoder, denoiser, device, lr=5e-5):
        super().__init__()
        self.device = device
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder.to(device)
        self.denoiser = denoiser.to(device)
        self.optimizer = torch.optim.AdamW(self.denoiser.parameters(), lr=lr)
        self.embeds_by_prompt = dict({})

    def encode_prompts(self, prompts):
        embeds = []
        for prompt in prompts:
            if prompt not in self.embeds_by_prompt:
                ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
                self.embeds_by_prompt[prompt] = self.text_encoder(ids)[0].clone()
            embeds.append(self.embeds_by_prompt[prompt])
        return torch.cat(embeds, dim=0)

    def train_step(self, degraded, clean, prompts):
        self.embeds_by_prompt = dict({})
        noise = torch.randn_like(clean)
        prediction = self.denoiser(torch.cat([clean + noise, degraded], dim=1), self.encode_prompts(prompts))
        loss = F.mse_loss(prediction, noise)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()
