"""A plain (non-module) helper class with its own load_state_dict."""
class Shadow:
    def __init__(self, decay):
        self.decay = decay
        self.store = {}

    def load_state_dict(self, state, strict=True):
        self.store = {k: v.clone() for k, v in state.items()}
