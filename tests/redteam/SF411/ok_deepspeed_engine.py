"""DeepSpeed engine: `engine.backward(loss)` scales by the configured accumulation (correct)."""
for step, batch in enumerate(loader):
    loss = engine(batch["x"], batch["y"])
    engine.backward(loss)
    engine.step()
