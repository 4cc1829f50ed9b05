"""Mined (state-injection module diagnostics): RMS of a jump relative to the state's RMS plus 1e-8, both from `.pow(2).mean().sqrt()`."""
import torch


def injection_diagnostics(state, jump, diagnostics):
    state_rms = state.detach().pow(2).mean().sqrt()
    jump_rms = jump.detach().pow(2).mean().sqrt()
    diagnostics.setdefault("jump_rms", []).append(jump_rms)
    diagnostics.setdefault("relative_jump", []).append(jump_rms / (state_rms + 1e-8))  # expect: SF304
    return diagnostics
