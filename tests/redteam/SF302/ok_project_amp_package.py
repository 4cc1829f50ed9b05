"""Project amp package (must stay silent)."""
import mylib.cuda.amp as amp
from mylib import amp as project_amp


def step(model, x):
    with amp.autocast():
        with project_amp.autocast(enabled=True):
            return model(x)
