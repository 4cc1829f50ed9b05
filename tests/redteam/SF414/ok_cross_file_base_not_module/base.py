"""A project's base class for data transforms: not an nn.Module."""


class Transform:
    def __call__(self, x):
        return self.forward(x)
