"""Import aliases everywhere: `import torch as T`, `from torch.nn import LSTM as Recurrent`."""
import torch as T
from torch.nn import LSTM as Recurrent

rnn = Recurrent(16, 32)
opt = T.optim.Adam(rnn.parameters())


def go():
    for seq, target in stream:
        out, _ = rnn(seq)
        loss = T.nn.functional.mse_loss(out[-1], target)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":  # expect: SF420
    go()
