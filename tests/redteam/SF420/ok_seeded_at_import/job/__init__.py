"""A job package whose settings module seeds when it is imported."""
