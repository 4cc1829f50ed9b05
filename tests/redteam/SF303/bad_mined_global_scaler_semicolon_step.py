"""Mined (GRU seq2seq with teacher forcing): an upper-case module-level scaler, step and update on one line after the clip."""
import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
SCALER = torch.amp.GradScaler("cuda", enabled=(DEVICE.type == "cuda"))


def train_epoch(model, loader, opt, crit, clip):
    model.train()
    tot = 0.0
    for src, src_len, tgt in loader:
        src, tgt = src.to(DEVICE), tgt.to(DEVICE)
        opt.zero_grad(set_to_none=True)
        with torch.amp.autocast("cuda", enabled=(DEVICE.type == "cuda")):
            logits = model(src, src_len, tgt, teacher_forcing=0.7)
            loss = crit(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        SCALER.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # expect: SF303
        SCALER.step(opt); SCALER.update()
        tot += loss.item()
    return tot / max(1, len(loader))
