"""A package whose positional table is built by a helper module."""
