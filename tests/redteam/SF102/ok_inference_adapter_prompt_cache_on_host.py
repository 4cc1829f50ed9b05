"""Near miss of bad_mined_inference_adapter_prompt_cache: the per-instruction embeddings are memoised as CPU copies
and moved to the restorer's device when they are read (silent)."""
import torch
from torch import nn


class InstructedRestorer(nn.Module):
    def __init__(self, restorer, text_model, text_head, device="cuda"):
        super().__init__()
        self.device = torch.device(device)
        self.embedded: dict[str, torch.Tensor] = {}
        self.restorer = restorer.to(self.device).eval()
        self.text_model = text_model.eval()
        self.text_head = text_head.eval()

    @torch.inference_mode()
    def embed(self, instruction: str) -> torch.Tensor:
        if instruction not in self.embedded:
            features, _ = self.text_head(self.text_model(instruction))
            self.embedded[instruction] = features.to("cpu")
        return self.embedded[instruction].to(self.device, non_blocking=True)

    @torch.inference_mode()
    def forward(self, image: torch.Tensor, instruction: str) -> torch.Tensor:
        return self.restorer(image.to(self.device), self.embed(instruction)).clamp(0.0, 1.0)
