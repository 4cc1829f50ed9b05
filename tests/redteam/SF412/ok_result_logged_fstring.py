"""The unexpected keys are logged through an f-string."""
import logging

log = logging.getLogger(__name__)


def load(net, weights):
    info = net.load_state_dict(weights, strict=False)
    log.warning(f"unexpected keys: {info.unexpected_keys}")
