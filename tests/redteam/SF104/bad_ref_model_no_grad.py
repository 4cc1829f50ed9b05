"""PPO: reference log-probs through take_along_dim of an inline log_softmax; the policy's log-probs also feed a KL (bad once)."""
import torch
import torch.nn.functional as F


class PPOTrainer:
    def step(self, queries, responses):
        seq = torch.cat([queries, responses], dim=1)
        with torch.no_grad():
            ref_logits = self.ref_model(seq).logits[:, :-1]
            ref_lp = torch.take_along_dim(F.log_softmax(ref_logits, -1), seq[:, 1:, None], dim=-1)  # expect: SF104
        logits = self.policy(seq).logits[:, :-1]
        lp = F.log_softmax(logits, -1)
        kl = (lp.exp() * (lp - F.log_softmax(ref_logits, -1))).sum(-1)
        return lp.gather(-1, seq[:, 1:, None]), ref_lp, kl
