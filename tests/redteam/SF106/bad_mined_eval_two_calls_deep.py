"""Mined shape: a hand-written Trainer's fit() and test() switch the model to eval and call validation/test step methods that run the shared forward helper two calls deep, with autograd on (bad)."""
import torch


class PlainTrainer:
    def __init__(self, model, criterion, lr=1e-3, device="cuda"):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.criterion = criterion
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.seen = []

    def shared_forward(self, batch):
        inputs, labels = batch
        outputs = self.model(inputs.to(self.device))  # expect: SF106
        return self.criterion(outputs, labels.to(self.device)), outputs.argmax(1)

    def training_step(self, batch):
        loss, _ = self.shared_forward(batch)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()

    def validation_step(self, batch):
        loss, preds = self.shared_forward(batch)
        self.seen.append(loss.item())

    def fit(self, train_batches, val_batches, epochs=3):
        for epoch in range(epochs):
            self.model.train()
            for batch in train_batches:
                self.training_step(batch)
            self.model.eval()
            for batch in val_batches:
                self.validation_step(batch)  # expect: SF106

    def test(self, test_batches):
        self.model.eval()
        for batch in test_batches:
            self.validation_step(batch)  # expect: SF106
        return sum(self.seen) / max(len(self.seen), 1)
