"""The missing keys are asserted empty."""
def load(net, weights):
    result = net.load_state_dict(weights, strict=False)
    assert not result.missing_keys, result.missing_keys
    return net
