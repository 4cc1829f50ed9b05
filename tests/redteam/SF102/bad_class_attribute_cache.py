"""Class-level dict shared by all instances memoises speaker embeddings (detached, on the device) per speaker id during TTS training (bad)."""
import torch


class SpeakerConditioner(torch.nn.Module):
    _embeddings = {}

    def __init__(self, speaker_encoder):
        super().__init__()
        self.speaker_encoder = speaker_encoder

    def forward(self, speaker_ids, ref_wavs):
        out = []
        for spk, wav in zip(speaker_ids, ref_wavs):
            if spk not in SpeakerConditioner._embeddings:
                emb = self.speaker_encoder(wav.unsqueeze(0)).squeeze(0).detach()
                SpeakerConditioner._embeddings[spk] = emb  # expect: SF102
            out.append(SpeakerConditioner._embeddings[spk])
        return torch.stack(out)
