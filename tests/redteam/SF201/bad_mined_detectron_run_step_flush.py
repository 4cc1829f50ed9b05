"""Mined shape: a detectron2-style trainer run_step() (called by the library once per iteration) deletes its loss dicts and flushes the cache and the garbage collector at the end of every step (bad)."""
import gc
import time

import torch
from detectron2.engine import SimpleTrainer


class TeacherStudentTrainer(SimpleTrainer):
    def __init__(self, model, loader, optimizer, cfg):
        super().__init__(model, loader, optimizer)
        self.cfg = cfg

    def run_step(self):
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start
        record = self.model(data, branch="unsup")
        weighted = {k: v * self.cfg.UNSUP_WEIGHT for k, v in record.items() if k.startswith("loss")}
        losses = sum(weighted.values())
        record["data_time"] = data_time
        self._write_metrics(record)
        self.optimizer.zero_grad()
        losses.backward()
        self.clip_gradient(self.model, 10.0)
        self.optimizer.step()
        del record
        del weighted
        del losses
        torch.cuda.empty_cache()  # expect: SF201
        gc.collect()

    def clip_gradient(self, model, limit):
        torch.nn.utils.clip_grad_norm_(model.parameters(), limit)
