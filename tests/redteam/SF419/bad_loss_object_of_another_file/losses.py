"""The loss object of another file: calling it differentiates (its `__call__`), and the validation pass calls it after `model.eval()`."""
class LossCompute:
    def __init__(self, generator, criterion, opt=None):
        self.generator, self.criterion, self.opt = generator, criterion, opt

    def __call__(self, x, y, norm):
        x = self.generator(x)
        loss = self.criterion(x.reshape(-1, x.size(-1)), y.reshape(-1)) / norm
        loss.backward()
        return loss.item() * norm
