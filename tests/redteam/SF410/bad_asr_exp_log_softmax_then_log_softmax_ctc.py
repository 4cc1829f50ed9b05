"""ASR step: the decoder's probabilities are computed as exp(log_softmax) for beam search, and the same
tensor is log-softmaxed again for the CTC loss (squashed toward -log(C))."""
import torch
import torch.nn.functional as F


def asr_step(encoder, batch, optimizer):
    log_p = encoder(batch["feats"]).log_softmax(dim=-1)
    probs = log_p.exp()
    loss = F.ctc_loss(  # expect: SF410
        F.log_softmax(probs, dim=-1).transpose(0, 1),
        batch["targets"], batch["feat_lens"], batch["target_lens"], blank=0,
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
