"""Mined (generic classifier trainer): a method computes `self.criterion(outputs, outputs)` although labels are at hand for the accuracy."""
import torch


class ClassifierTrainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.criterion = torch.nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def fit(self, loader, epochs):
        history = []
        for _ in range(epochs):
            self.model.train()
            correct = 0
            for images, labels in loader:
                images = images.to(self.device)
                self.optimizer.zero_grad()
                logits = self.model(images)
                loss = self.criterion(logits, logits)  # expect: SF401
                loss.backward()
                self.optimizer.step()
                correct += (logits.argmax(1).cpu() == labels).sum().item()
            history.append(correct)
        return history
