"""A graph trainer clips behind the max-grad-norm option after the step, with profiling in between."""
import torch as th


class NodePredictionTrainer:
    def __init__(self, model, optimizer, profiler):
        self.model = model
        self.optimizer = optimizer
        self.profiler = profiler

    def fit(self, loader, max_grad_norm=None, grad_norm_type=2.0):
        for input_nodes, seeds, blocks in loader:
            loss = self.model(blocks, input_nodes, seeds)
            self.optimizer.zero_grad()
            loss.backward()
            self.profiler.record("train_backward")
            self.optimizer.step()
            self.profiler.record("train_step")
            if max_grad_norm is not None:
                th.nn.utils.clip_grad_norm_(self.model.parameters(), max_grad_norm, grad_norm_type)  # expect: SF406
