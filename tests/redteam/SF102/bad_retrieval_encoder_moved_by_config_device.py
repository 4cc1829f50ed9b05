"""Retrieval service: the query encoder is moved to the device the config names, and every query's
embedding is memoised by its text under `inference_mode` in a dict on the instance (bad)."""
import torch


class QueryEncoder:
    def __init__(self, cfg, tokenizer):
        self.tokenizer = tokenizer
        self.model = build_encoder(cfg.checkpoint).to(cfg.device)
        self._by_text = {}

    def encode(self, text):
        if text in self._by_text:
            return self._by_text[text]
        ids = self.tokenizer(text)
        with torch.inference_mode():
            emb = self.model(ids)
        self._by_text[text] = emb  # expect: SF102
        return emb
