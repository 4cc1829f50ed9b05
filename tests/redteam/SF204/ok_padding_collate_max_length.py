"""a collate call with max_length and a random-crop sampler in the step are not generation (ok)."""
for step, raw in enumerate(raw_loader):
    enc = collate_batch(raw, max_length=512, pad_to_multiple_of=8)
    idx = crop_sampler.sample()
    loss = model(**enc).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(idx)
