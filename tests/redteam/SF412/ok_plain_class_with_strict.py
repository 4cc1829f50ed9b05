"""A plain bookkeeping class of the file with its own load_state_dict that takes strict."""
class RunningStats:
    def __init__(self):
        self.values = {}

    def load_state_dict(self, state, strict=True):
        self.values = dict(state)


def restore(state):
    stats = RunningStats()
    stats.load_state_dict(state, strict=False)
    return stats
