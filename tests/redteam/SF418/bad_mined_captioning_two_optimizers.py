"""Mined (image-captioning notebook): encoder and decoder norms clipped after every micro-batch, both optimizers stepped every N."""
import torch


def train_fn(loader, encoder, decoder, criterion, enc_opt, dec_opt, accumulation, max_grad_norm):
    encoder.train()
    decoder.train()
    for step, (images, captions) in enumerate(loader):
        features = encoder(images)
        logits = decoder(features, captions[:, :-1])
        loss = criterion(logits.reshape(-1, logits.size(-1)), captions[:, 1:].reshape(-1)) / accumulation
        loss.backward()
        enc_norm = torch.nn.utils.clip_grad_norm_(encoder.parameters(), max_grad_norm)  # expect: SF418
        dec_norm = torch.nn.utils.clip_grad_norm_(decoder.parameters(), max_grad_norm)  # expect: SF418
        if (step + 1) % accumulation == 0:
            enc_opt.step()
            dec_opt.step()
            enc_opt.zero_grad()
            dec_opt.zero_grad()
    return enc_norm, dec_norm
