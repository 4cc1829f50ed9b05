"""NMT trainer running beam search every step for a BLEU meter (bad)."""
import torch


class NMTTrainer:
    def train_step(self, src, tgt):
        self.optimizer.zero_grad()
        logits = self.model(src, tgt[:, :-1])
        loss = self.criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        loss.backward()
        self.optimizer.step()
        hyps = self.translator.beam_search(src, beam_size=5, max_len=80)  # expect: SF204
        self.bleu_meter.add(hyps, tgt)
        return loss.item()
