"""A GAN script: pretrained generator weights loaded through a small helper method."""
import torch
import torch.serialization


class GANTrainer:
    def __init__(self, generator, discriminator, g_path, d_path):
        self.generator = generator
        self.discriminator = discriminator
        self.generator.load_state_dict(self._weights(g_path))
        self.discriminator.load_state_dict(torch.serialization.load(d_path)["params"])  # expect: SF107

    def _weights(self, path):
        state = torch.load(path, weights_only=True)  # expect: SF107
        return state
