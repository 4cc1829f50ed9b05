"""Gradient cache: backward on the real loss first, then a fresh leaf copy is returned for the caller (correct)."""


def loss_and_cached_grads(self, logits, batch_size):
    loss = self.calculate_loss(logits, batch_size)
    loss.backward()
    loss = loss.detach().requires_grad_()
    cache = [logit.grad for logit in logits]
    return loss, cache
