"""A package whose entry boots through engine.py, which seeds through repro.py."""
