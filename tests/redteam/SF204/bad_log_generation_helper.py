"""accelerate loop calling a sampling helper (model.generate) after every update (bad)."""
import torch


def sample_text(model, tokenizer, accelerator, length=64):
    model.eval()
    ids = tokenizer("", return_tensors="pt")["input_ids"].to(accelerator.device)
    out = model.generate(input_ids=ids, max_length=length, do_sample=True, top_k=50)
    accelerator.print(tokenizer.decode(out[0]))
    model.train()


for step, batch in enumerate(train_dataloader):
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    sample_text(model, tokenizer, accelerator)  # expect: SF204
