"""A DeepSpeed engine scales, unscales and clips itself (`gradient_clipping` in its config)."""
import deepspeed

engine, _, loader, _ = deepspeed.initialize(model=model, config=ds_config, training_data=data)
for batch in loader:
    loss = engine(batch)
    engine.backward(loss)
    engine.step()
