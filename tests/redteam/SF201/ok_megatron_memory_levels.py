"""Megatron-style train_step: cleanup behind config levels `empty_unused_memory_level >= 1` and `>= 2` (a user's explicit choice, off by default)."""
import torch


def train_step(args, forward_backward, model, optimizer, scheduler, data_iterator):
    for chunk in model:
        chunk.zero_grad_buffer()
    optimizer.zero_grad()
    losses = forward_backward(data_iterator, model)
    if args.empty_unused_memory_level >= 1:
        torch.cuda.empty_cache()
    update_successful, grad_norm, _ = optimizer.step()
    if update_successful:
        scheduler.step(increment=args.global_batch_size)
    if args.empty_unused_memory_level >= 2:
        torch.cuda.empty_cache()
    return losses, grad_norm


def train(args, forward_backward, model, optimizer, scheduler, data_iterator):
    for iteration in range(args.train_iters):
        train_step(args, forward_backward, model, optimizer, scheduler, data_iterator)
