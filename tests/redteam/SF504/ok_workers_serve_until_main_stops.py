"""A serve/stop protocol: the worker ranks loop on a scatter from rank 0 until told to stop, then leave the function;
rank 0 skips that branch, does its work, and its own scatter sends the stop. Each side of the early exit runs a
scatter, so every rank reaches one (the shape of sentence-transformers' distributed evaluation, paraphrased)."""
import torch.distributed as dist


class SharedInference:
    def __init__(self, model):
        self.model = model
        self.size = dist.get_world_size()

    def _exchange(self, outgoing=None):
        slot = [None]
        dist.scatter_object_list(slot, outgoing, src=0)
        return slot[0]

    def _answer(self, inputs):
        replies = [None] * self.size if dist.get_rank() == 0 else None
        dist.gather_object(self.model(inputs), replies, dst=0)
        return replies

    def serve(self):
        while True:
            kind, inputs = self._exchange()
            if kind == "halt":
                return
            self._answer(inputs)

    def halt(self):
        self._exchange([("halt", None)] * self.size)


def evaluate_everywhere(model, run_evaluator):
    shared = SharedInference(model)
    leader = dist.get_rank() == 0
    if not leader:
        shared.serve()
        return None
    try:
        return run_evaluator(shared)
    finally:
        shared.halt()
