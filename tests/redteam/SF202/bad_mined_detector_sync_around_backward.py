"""Mined shape: a detector training loop with a barrier before the backward and another before the optimizer step on every iteration, the batch time measured after (bad)."""
import time

import torch


def train(loader, target_net, optimizer, args, clip_gradient):
    target_net.train()
    end = time.time()
    for i, (im_data, boxes) in enumerate(loader):
        target_net(im_data.cuda(), boxes)
        loss = target_net.loss_cls + target_net.loss_box
        optimizer.zero_grad()
        torch.cuda.synchronize()  # expect: SF202
        loss.backward()
        if not args.disable_clip:
            clip_gradient(target_net, 10.0)
        torch.cuda.synchronize()  # expect: SF202
        optimizer.step()
        batch_time = time.time() - end
        end = time.time()
        if (i + 1) % args.log_interval == 0:
            print(i, batch_time)
