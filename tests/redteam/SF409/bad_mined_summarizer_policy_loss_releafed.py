"""Mined (extractive summariser, REINFORCE): the expected-reward loss from the model's outputs is re-leafed before it is returned to the trainer."""
import torch


class SummaryTrainer:
    def __init__(self, scorer, reward_fn):
        self.scorer = scorer
        self.reward_fn = reward_fn

    def policy_loss(self, sentences, references):
        probs = self.scorer(sentences)
        rewards = self.reward_fn(probs.detach(), references)
        loss = -torch.dot(rewards, torch.sum(torch.log(probs), dim=1))
        loss = torch.tensor(loss, requires_grad=True)  # expect: SF409
        return loss, probs
