"""char-RNN loop sampling 200 characters with multinomial after every update (bad)."""
import torch

rnn = CharRNN(vocab).cuda()
rnn.train()
for step, (inp, target) in enumerate(batches):
    out, _ = rnn(inp)
    loss = torch.nn.functional.cross_entropy(out.view(-1, vocab), target.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    ch = inp[:1, :1]
    text = []
    hidden = None
    for _ in range(200):  # expect: SF204
        logits, hidden = rnn(ch, hidden)
        ch = torch.multinomial(torch.softmax(logits[:, -1], -1), 1)
        text.append(ch.item())
    print("".join(itos[i] for i in text))
