"""HF Trainer.training_step override flushing only every `torch_empty_cache_steps` global steps (an interval gate)."""
import torch
from transformers import Trainer


class PatchedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        del inputs
        if (
            self.args.torch_empty_cache_steps is not None
            and self.state.global_step % self.args.torch_empty_cache_steps == 0
        ):
            torch.cuda.empty_cache()
        self.accelerator.backward(loss)
        return loss.detach()
