"""Two optimizers over disjoint encoders; a helper the loop calls clears both modules' gradients (correct)."""
import torch


class Contrastive:
    def __init__(self, image_encoder, text_encoder):
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder
        self.image_opt = torch.optim.AdamW(self.image_encoder.parameters(), lr=1e-4)
        self.text_opt = torch.optim.AdamW(self.text_encoder.parameters(), lr=5e-5)

    def _clear(self):
        self.image_encoder.zero_grad(set_to_none=True)
        self.text_encoder.zero_grad(set_to_none=True)

    def fit(self, pairs):
        for images, texts in pairs:
            self._clear()
            loss = clip_loss(self.image_encoder(images), self.text_encoder(texts))
            loss.backward()
            self.image_opt.step()
            self.text_opt.step()
