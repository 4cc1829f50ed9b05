"""Sum of terms re-wrapped with `Variable(total.data, requires_grad=True)` to silence an error (bad)."""
from torch.autograd import Variable


def step(model, x, y, crit, aux_crit, opt):
    out, aux = model(x)
    total = crit(out, y) + 0.3 * aux_crit(aux, y)
    total = Variable(total.data, requires_grad=True)  # expect: SF409
    opt.zero_grad()
    total.backward()
    opt.step()
