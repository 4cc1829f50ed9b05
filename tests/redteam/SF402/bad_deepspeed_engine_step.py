"""DeepSpeed engine: `engine.step()` (the optimizer step) followed by an undo on `engine.module.parameters()` (bad)."""
import deepspeed
import torch


def train(model, ds_config, loader, lr, evaluate):
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for batch in loader:
        loss = engine(batch)
        engine.backward(loss)
        engine.step()
        if evaluate(engine) < 0:
            with torch.no_grad():
                for p in engine.module.parameters():
                    p.add_(p.grad, alpha=lr)  # expect: SF402
