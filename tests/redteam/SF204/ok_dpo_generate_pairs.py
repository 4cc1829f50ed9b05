"""online DPO: two generated completions per prompt are ranked and trained on (ok)."""
import torch

for prompts in loader:
    with torch.no_grad():
        pair = policy.generate(prompts, do_sample=True, num_return_sequences=2, max_new_tokens=128)
    chosen, rejected = judge_rank(pair)
    loss = dpo_loss(policy, ref_model, chosen, rejected)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
