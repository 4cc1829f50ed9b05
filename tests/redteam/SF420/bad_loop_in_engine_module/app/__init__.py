"""Package whose training loop is in engine.py and whose entry is cli.py."""
