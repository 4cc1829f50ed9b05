"""DeepSpeed's engine scales the float16 loss in its own backward."""
import torch


def train(model_engine, loader):
    for step, batch in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model_engine(batch)
        model_engine.backward(loss)
        model_engine.step()
