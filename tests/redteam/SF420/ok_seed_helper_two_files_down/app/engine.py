"""Engine: `boot` prepares the run (seeding through repro.py) before anything random."""
from .repro import make_reproducible


def boot(cfg):
    make_reproducible(cfg["seed"])
    return cfg
