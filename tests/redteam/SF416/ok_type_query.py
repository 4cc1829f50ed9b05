"""`x.type()` with no argument asks for the type's name: not a cast."""
import torch


def describe(n):
    x = torch.ones(n)
    x.type()
    print(x.type())
