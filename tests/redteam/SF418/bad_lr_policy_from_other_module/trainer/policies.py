"""Builds the learning-rate policy the loop steps: a transformers warm-up schedule."""
from transformers import get_cosine_schedule_with_warmup


def build_policy(optimizer, warmup, total):
    policy = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=warmup, num_training_steps=total)
    return policy
