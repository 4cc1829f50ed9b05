"""Mined (continual-learning Reptile update): a dict filled key by key from the model's own parameters, loaded back."""
class Reptile:
    def __init__(self, model, beta):
        self.model = model
        self.beta = beta
        self.before = None

    def inner_update(self):
        after = self.model.state_dict()
        new_weights = {}
        for name, _ in self.model.named_parameters():
            new_weights[name] = self.before[name] + (after[name] - self.before[name]) * self.beta
        self.model.load_state_dict(new_weights, strict=False)
