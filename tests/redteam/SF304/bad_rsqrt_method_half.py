"""RMS scaling of a .half() tensor with the rsqrt method and 1e-10 (bad)."""


def rms_scale(x):
    x = x.half()
    return x * (x.pow(2).mean(-1, keepdim=True) + 1e-10).rsqrt()  # expect: SF304
