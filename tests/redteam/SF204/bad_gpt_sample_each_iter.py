"""GPT training loop generating 100 tokens on every iteration for a printout (bad)."""
import torch

model = GPT(config).to("cuda")
optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=6e-4)
it = 0
while it < max_iters:
    xb, yb = get_batch("train")
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    start = torch.zeros((1, 1), dtype=torch.long, device="cuda")
    generated = model.generate(start, max_new_tokens=100)  # expect: SF204
    print(decode(generated[0].tolist()))
    it += 1
