"""The package."""
