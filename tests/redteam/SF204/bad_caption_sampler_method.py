"""image-captioning trainer sampling a caption with a same-file method every step (bad)."""
import torch


class CaptionTrainer:
    def sample_caption(self, feats, limit=20):
        words = [self.bos]
        hidden = None
        for _ in range(limit):
            scores, hidden = self.decoder(feats, torch.tensor([[words[-1]]], device=feats.device), hidden)
            words.append(scores.argmax(-1).item())
        return words

    def train_step(self, images, captions):
        feats = self.encoder(images)
        logits, _ = self.decoder(feats, captions[:, :-1], None)
        loss = self.criterion(logits.transpose(1, 2), captions[:, 1:])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        shown = self.sample_caption(feats[:1].detach())  # expect: SF204
        self.logger.info("caption %s", shown)
        return loss.item()
