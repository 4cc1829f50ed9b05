"""Two-phase script: the teacher is used to pre-compute soft labels, deleted, and the cache flushed once before the student's training loop."""
import gc

import torch
import torch.nn.functional as F


def run(teacher, student, loader, optimizer, epochs):
    soft = {}
    with torch.no_grad():
        for ids, x in loader:
            soft.update(zip(ids.tolist(), teacher(x.cuda()).softmax(-1).cpu()))
    del teacher
    gc.collect()
    torch.cuda.empty_cache()
    for _ in range(epochs):
        for ids, x in loader:
            target = torch.stack([soft[i] for i in ids.tolist()]).cuda()
            loss = F.kl_div(F.log_softmax(student(x.cuda()), -1), target, reduction="batchmean")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
