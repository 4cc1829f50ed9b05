"""A TorchScript actor exported on a GPU box and loaded by a rollout worker."""
import torch


def make_policy(path):
    policy = torch.jit.load(path)  # expect: SF107
    policy = policy.cuda()
    policy.eval()
    return policy
