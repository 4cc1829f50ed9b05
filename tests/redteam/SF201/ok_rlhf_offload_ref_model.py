"""RLHF iteration: the reference model is moved to the GPU to score rollouts and back to the CPU, with a flush after the swap (model swap boundary)."""
import torch


def rlhf_iteration(policy, ref_model, optimizer, prompts, compute_loss):
    with torch.no_grad():
        rollouts = policy.generate(prompts, max_new_tokens=128)
        ref_model.to("cuda")
        ref_logits = ref_model(rollouts).logits
        ref_model.to("cpu")
    torch.cuda.empty_cache()
    loss = compute_loss(policy(rollouts).logits, ref_logits)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
