"""Logging helper: prints, seeds nothing."""


def log_metrics(value):
    print(f"loss {value:.4f}")
