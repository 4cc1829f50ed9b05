"""accelerate's set_seed with the parsed flag."""
import torch
from accelerate.utils import set_seed
from torch.utils.data import DataLoader


def main(args):
    set_seed(args.seed)
    loader = DataLoader(train_ds, shuffle=True, batch_size=4)
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in loader:
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main(get_args())
