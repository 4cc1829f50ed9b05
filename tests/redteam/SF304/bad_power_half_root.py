"""Std matching with the root spelled ** 0.5: (var + 1e-12) ** 0.5 (bad)."""


def match_std(out, ref_std):
    return out * (ref_std / (out.var(-1, keepdim=True) + 1e-12) ** 0.5)  # expect: SF304
