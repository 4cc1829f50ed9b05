"""RLHF update loop reading each sample's score back with tolist() inside a per-sample loop (bad)."""
import torch

for batch in prompt_loader:
    with torch.no_grad():
        out = actor.generate(batch["input_ids"].cuda(), max_new_tokens=32)
    scores = []
    for seq in out:
        scores.append(critic(seq.unsqueeze(0)).squeeze().tolist())  # expect: SF202
    loss = actor_loss(actor, out, torch.tensor(scores, device="cuda"))
    loss.backward()
    optim.step()
    optim.zero_grad()
