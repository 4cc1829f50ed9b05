"""An embedding memo kept on a host device that a setup helper of the file binds on the instance."""
import torch


def configure_storage(holder):
    holder.entry_device = torch.device("cpu")


class HostPromptCache:
    def __init__(self, text_encoder):
        self.text_encoder = text_encoder
        configure_storage(self)
        self.entries = {}

    def encode(self, prompt_key, token_ids):
        embedding = self.text_encoder(token_ids)
        self.entries[prompt_key] = embedding.detach().to(self.entry_device)
        return self.entries[prompt_key]
