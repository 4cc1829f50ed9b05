"""Zero-argument model factories for the peer tool's `--model module:factory` (bench only)."""


def classic_pitfalls_tiny_lm():
    from tiny_lm import LMConfig, TinyLM  # fixtures/classic_pitfalls on PYTHONPATH

    return TinyLM(LMConfig())
