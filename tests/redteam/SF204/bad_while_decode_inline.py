"""greedy while-loop decode written in the step function, only printed (bad)."""
import torch


def train_iteration(decoder, opt, memory, target, sos):
    decoder.train()
    out = decoder(memory, target[:, :-1])
    loss = torch.nn.functional.cross_entropy(out.transpose(1, 2), target[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    seq = [sos]
    while len(seq) < 30:  # expect: SF204
        step_logits = decoder(memory[:1], torch.tensor([seq], device=memory.device))
        seq.append(int(step_logits[0, -1].argmax()))
    print("greedy:", seq)
