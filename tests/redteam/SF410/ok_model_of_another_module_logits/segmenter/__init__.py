"""A segmentation package: the network lives in its own module."""
