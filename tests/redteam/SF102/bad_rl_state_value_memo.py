"""RL agent memoising the frozen reward model's scores per prompt/response string on the GPU for reuse across PPO epochs (bad)."""
import torch


class RewardMemo:
    def __init__(self, reward_model, tokenizer, device):
        self.reward_model = reward_model
        self.tokenizer = tokenizer
        self.device = device
        self.scores = {}

    def score(self, texts):
        out = []
        for text in texts:
            if text not in self.scores:
                enc = self.tokenizer(text, return_tensors="pt").to(self.device)
                with torch.no_grad():
                    reward = self.reward_model(**enc).logits[0, 0]
                self.scores[text] = reward.clone()  # expect: SF102
            out.append(self.scores[text])
        return torch.stack(out)


def ppo_loop(policy, memo, sampler, ppo_update, iters):
    for _ in range(iters):
        texts = sampler(policy)
        ppo_update(policy, texts, memo.score(texts))
