"""TrainerCallback sampling with the trained model on every step for a wandb table (bad)."""
from transformers import TrainerCallback


class SampleLogger(TrainerCallback):
    def on_step_end(self, args, state, control, model=None, tokenizer=None, **kwargs):
        prompt = tokenizer("Once upon a time", return_tensors="pt").to(model.device)
        story = model.generate(**prompt, do_sample=True, top_p=0.9, max_new_tokens=64)  # expect: SF204
        self.table.add_data(state.global_step, tokenizer.decode(story[0]))
