"""Mined shape: a frozen restoration baseline wrapped as a module memoises the embedding of every instruction it is
given in an annotated dict on `self`; instructions are written per image from its capture metadata, each embedding is
computed under `@torch.inference_mode()` and stored after `.to(self.device)` (bad: one device tensor per image)."""
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
        for part in (self.restorer, self.text_model, self.text_head):
            part.requires_grad_(False)

    @torch.inference_mode()
    def embed(self, instruction: str) -> torch.Tensor:
        if instruction not in self.embedded:
            features, _ = self.text_head(self.text_model(instruction))
            self.embedded[instruction] = features.to(self.device)  # expect: SF102
        return self.embedded[instruction]

    @torch.inference_mode()
    def forward(self, image: torch.Tensor, instruction: str) -> torch.Tensor:
        return self.restorer(image.to(self.device), self.embed(instruction)).clamp(0.0, 1.0)


def instruction_for(record: dict) -> str:
    pose = record.get("pose", {})
    return f"Restore this road image; camera yaw {pose.get('yaw')}, pitch {pose.get('pitch')}, altitude {pose.get('alt')}."


def restore_all(restorer, records, load_image):
    return [restorer(load_image(record), instruction_for(record)) for record in records]
