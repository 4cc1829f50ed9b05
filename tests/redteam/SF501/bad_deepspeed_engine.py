"""DeepSpeed engine training from a plain shuffling loader."""
import deepspeed
from torch.utils.data import DataLoader


def main(args, model, dataset):
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    loader = DataLoader(dataset, batch_size=args.micro_batch, shuffle=True)  # expect: SF501
    for epoch in range(args.epochs):
        for batch in loader:
            loss = engine(batch)
            engine.backward(loss)
            engine.step()
