"""`import torch as th` and a module-level memo of fp16 audio-encoder features per clip name, computed under th.inference_mode() (bad)."""
import torch as th

FEATURE_MEMO = {}


def clip_features(audio_encoder, name, wav):
    feats = FEATURE_MEMO.get(name)
    if feats is None:
        with th.inference_mode():
            feats = audio_encoder(wav.cuda()).half()
        FEATURE_MEMO[name] = feats  # expect: SF102
    return feats


def train_epoch(head, audio_encoder, loader, opt):
    for names, wavs, labels in loader:
        x = th.stack([clip_features(audio_encoder, n, w) for n, w in zip(names, wavs)]).float()
        loss = th.nn.functional.cross_entropy(head(x), labels.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
