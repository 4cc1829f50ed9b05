"""The load result is kept on the object for later inspection."""
class Wrapper:
    def __init__(self, net):
        self.net = net
        self.load_info = None

    def load(self, weights):
        self.load_info = self.net.load_state_dict(weights, strict=False)
