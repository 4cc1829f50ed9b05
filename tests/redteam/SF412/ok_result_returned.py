"""The result is returned to the caller, who decides."""
def load_loose(net, weights):
    return net.load_state_dict(weights, strict=False)
