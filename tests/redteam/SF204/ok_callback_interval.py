"""generation preview callback behind a step interval (ok)."""
from transformers import TrainerCallback


class GenerationPreview(TrainerCallback):
    def __init__(self, tokenizer, prompts, every=2000):
        self.tokenizer = tokenizer
        self.prompts = prompts
        self.every = every

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step == 1 or state.global_step % self.every == 0:
            enc = self.tokenizer(self.prompts, return_tensors="pt", padding=True).to(model.device)
            out = model.generate(**enc, max_new_tokens=32)
            print(self.tokenizer.batch_decode(out))
