"""Mined (segmentation notebook script): step, scheduler step, then the clip, at module level in the epoch loop."""
import torch

net = torch.nn.Conv2d(3, 4, 1)
opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
ce = torch.nn.CrossEntropyLoss()

for epoch in range(5):
    net.train()
    for img, mask in [(torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8)))]:
        opt.zero_grad()
        out = net(img)
        loss = ce(out, mask)
        loss.backward()
        opt.step()
        sched.step()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)  # expect: SF406
