"""Mined (an instability probe script): the whole transformer cast with half(), Adam with a raised eps, no loss scaling."""
import torch
import torch.nn as nn

parser_lr = 0.1
net = TinyTransformer(vocab=64, width=64).to("cuda")
net = net.half()  # expect: SF305
opt = torch.optim.Adam(net.parameters(), lr=parser_lr, eps=1e-4)
loss_fn = nn.CrossEntropyLoss()
for it in range(500):
    tokens = torch.randint(0, 64, (16, 16), device="cuda")
    logits = net(tokens)
    loss = loss_fn(logits.float(), tokens[:, 0])
    if not torch.isfinite(loss):
        break
    opt.zero_grad()
    loss.backward()
    opt.step()
