"""Diffusion fine-tuning memoises (prompt_embeds, pooled) tuples per caption on the GPU, computed under no_grad (bad)."""
import torch


class CaptionEncoder:
    def __init__(self, text_encoder, tokenizer, device):
        self.text_encoder = text_encoder
        self.tokenizer = tokenizer
        self.device = device
        self.cache = {}

    @torch.no_grad()
    def __call__(self, caption):
        if caption not in self.cache:
            tokens = self.tokenizer(caption, padding="max_length", return_tensors="pt").to(self.device)
            out = self.text_encoder(**tokens, output_hidden_states=True)
            self.cache[caption] = (out.hidden_states[-2], out.text_embeds)  # expect: SF102
        return self.cache[caption]


def train(unet, encoder, loader, optimizer):
    for batch in loader:
        embeds, pooled = encoder(batch["caption"][0])
        loss = unet(batch["latents"], embeds, pooled)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
