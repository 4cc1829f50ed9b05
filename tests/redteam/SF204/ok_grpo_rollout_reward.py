"""GRPO update: the sampled sequences are rewarded and trained on (ok)."""
import torch


def grpo_update(policy, ref, tokenizer, prompts, optimizer, group=8):
    with torch.no_grad():
        seqs = policy.generate(prompts, do_sample=True, num_return_sequences=group, max_new_tokens=256)
    texts = tokenizer.batch_decode(seqs)
    scores = torch.tensor([reward_fn(t) for t in texts], device=seqs.device).view(-1, group)
    adv = ((scores - scores.mean(1, keepdim=True)) / (scores.std(1, keepdim=True) + 1e-4)).view(-1)
    logp = policy_logprobs(policy, seqs)
    loss = -(logp * adv.unsqueeze(1)).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
