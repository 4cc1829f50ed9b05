"""Session hooks legacy context (must be reported)."""
import torch


class HalfPrecisionContext:
    def on_train_start(self, session):
        session.scaler = torch.cuda.amp.GradScaler(init_scale=2.0**14)  # expect: SF302

    def forward(self, session):
        with torch.cuda.amp.autocast():  # expect: SF302
            session.output = session.model(session.batch)

    def backward(self, session):
        session.scaler.scale(session.loss).backward()
