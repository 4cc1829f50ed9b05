"""torch.manual_seed at the start of main."""
import torch
from torch.utils.data import DataLoader


def main():
    torch.manual_seed(17)
    loader = DataLoader(ds, shuffle=True)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


if __name__ == "__main__":
    main()
