"""Mined (image-captioning fine-tune): one sample per iteration, the model's `.loss` backpropagated undivided, a step every 4 samples."""


def fine_tune(model, processor, samples, optimizer, load_image, device):
    model.train()
    total = 0.0
    for i, sample in enumerate(samples):
        inputs = processor(images=load_image(sample["file"]), text=sample["caption"], return_tensors="pt").to(device)
        inputs["labels"] = inputs["input_ids"].clone()
        loss = model(**inputs).loss
        loss.backward()  # expect: SF411
        if (i + 1) % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / max(1, len(samples))
