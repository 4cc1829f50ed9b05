"""DeepSpeed's engine, unpacked from `deepspeed.initialize` into a neutral name (`net`), scales the float16 loss itself."""
import deepspeed
import torch


def train(args, model, loader):
    net, opt, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(batch)
        net.backward(loss)
        net.step()
