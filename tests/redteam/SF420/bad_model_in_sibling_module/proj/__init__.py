"""A small project: model in one module, training entry in another."""
