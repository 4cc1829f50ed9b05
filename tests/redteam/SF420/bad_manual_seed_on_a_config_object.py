"""`.manual_seed(...)` of the script's own settings object records a number and seeds no RNG."""
import torch


class Settings:
    def __init__(self):
        self.seed = None

    def manual_seed(self, value):
        self.seed = value


if __name__ == "__main__":  # expect: SF420
    settings = Settings()
    settings.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters())
    for x, y in batches:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
