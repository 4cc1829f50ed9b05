"""Voice-conversion step where the target-speaker mel is `copy.deepcopy(src_mel)` and the source mel feeds a content loss on the same output (bad)."""
import copy

import torch.nn.functional as F


def vc_step(converter, speaker_loss, optimizer, src_mel, spk_emb):
    tgt_mel = copy.deepcopy(src_mel)
    out = converter(src_mel, spk_emb)
    loss_spk = speaker_loss(out, tgt_mel)  # expect: SF401
    loss_content = F.l1_loss(out, src_mel)
    loss = loss_spk + loss_content
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
