"""batch-end hook that generates only every eval_every_n_steps (ok)."""
import torch


@torch.no_grad()
def generate_on_train_batch_end(trainer) -> None:
    if trainer.train_batch_index % trainer.eval_every_n_steps == 0:
        model = trainer.model
        start = torch.tensor([[0]], device=trainer.device)
        tokens = model.generate(start, max_tokens=100)
        print(trainer.tokenizer.decode(tokens[0].tolist()))
