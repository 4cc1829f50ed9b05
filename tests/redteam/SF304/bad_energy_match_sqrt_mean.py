"""Energy matching: ref RMS over out RMS + 1e-8, RMS spelled sqrt(mean(x ** 2)) (bad)."""
import torch


def match_stage_energy(out, ref):
    out_rms = torch.sqrt(torch.mean(out ** 2, dim=-1, keepdim=True))
    ref_rms = torch.sqrt(torch.mean(ref ** 2, dim=-1, keepdim=True))
    return out * (ref_rms / (out_rms + 1e-8))  # expect: SF304
