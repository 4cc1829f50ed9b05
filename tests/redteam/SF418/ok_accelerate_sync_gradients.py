"""accelerate: clip guarded by sync_gradients; the prepared scheduler skips non-sync passes by itself."""
from accelerate import Accelerator


def main(model, optimizer, loader, scheduler):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
