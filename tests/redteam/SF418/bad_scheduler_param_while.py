"""A while loop with a counter; the scheduler handed in as an argument is stepped every micro-batch."""


def run(model, stream, optimizer, lr_scheduler, total, accum):
    it = 0
    while it < total:
        batch = next(stream)
        loss = model(batch).mean() / accum
        loss.backward()
        lr_scheduler.step()  # expect: SF418
        if (it + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        it += 1
