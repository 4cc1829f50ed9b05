"""generation only in evaluate(), called behind the eval interval (ok)."""
import torch


@torch.no_grad()
def evaluate(model, loader, tokenizer):
    model.eval()
    for batch in loader:
        out = model.generate(batch["input_ids"], max_new_tokens=64)
        print(tokenizer.batch_decode(out))
    model.train()


for step, batch in enumerate(train_loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % eval_steps == 0:
        evaluate(model, val_loader, tokenizer)
