"""Dataset distillation with learnable soft labels: synthetic images and labels require grad and are optimised by Adam (legitimate)."""
import torch
import torch.nn.functional as F


def distill(make_net, real_loader, n_syn=100, n_cls=10, iters=1000, device="cuda"):
    syn_x = torch.randn(n_syn, 3, 32, 32, device=device, requires_grad=True)
    syn_y = torch.randn(n_syn, n_cls, device=device, requires_grad=True)
    outer = torch.optim.Adam([syn_x, syn_y], lr=1e-2)
    for it in range(iters):
        net = make_net().to(device)
        inner_loss = F.kl_div(F.log_softmax(net(syn_x), -1), F.softmax(syn_y, -1), reduction="batchmean")
        grads = torch.autograd.grad(inner_loss, list(net.parameters()), create_graph=True)
        x_real, y_real = next(iter(real_loader))
        fast = [p - 0.01 * g for p, g in zip(net.parameters(), grads)]
        outer_loss = F.cross_entropy(net.functional_forward(x_real.to(device), fast), y_real.to(device))
        outer.zero_grad()
        outer_loss.backward()
        outer.step()
    return syn_x.detach(), syn_y.detach()
