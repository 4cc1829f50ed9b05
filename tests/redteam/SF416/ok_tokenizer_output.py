"""A Hugging Face BatchEncoding moves its tensors in place and returns itself."""


def embed(tokenizer, model, texts, device):
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    enc.to(device)
    return model(**enc).last_hidden_state
