"""Mined (scorer memory/speed probe): repeated real training steps under float16 autocast, backward, clip, AdamW step, no scaler."""
import time

import torch


def time_training_steps(model, batch, loss_fn, repetitions, device):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    durations = []
    for iteration in range(repetitions + 1):
        started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: SF301
            output = model(batch)
            loss = loss_fn(output, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        torch.cuda.synchronize(device)
        if iteration:
            durations.append(time.perf_counter() - started)
    return durations
