"""VAE trainer keeps the KL term of every batch in a list for a plot."""
import torch


def train_vae(vae, loader, opt, epochs):
    kl_history = []
    for epoch in range(epochs):
        for x in loader:
            recon, mu, logvar = vae(x)
            rec = torch.nn.functional.binary_cross_entropy(recon, x, reduction="sum")
            kl_loss = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            opt.zero_grad()
            (rec + kl_loss).backward()
            opt.step()
            kl_history.append(kl_loss)  # expect: SF103
    return kl_history
