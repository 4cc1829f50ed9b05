"""accelerate loop generating through unwrap_model after every optimizer step (bad)."""
from accelerate import Accelerator

accelerator = Accelerator()
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    preview = accelerator.unwrap_model(model).generate(batch["input_ids"][:1], max_new_tokens=24)  # expect: SF204
    accelerator.print(tokenizer.batch_decode(preview))
