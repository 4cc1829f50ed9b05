"""An epoch runner calls `self.batch_update`; the training subclass's version clears before backward."""


class Epoch:
    def __init__(self, model, loss):
        self.model = model
        self.loss = loss

    def batch_update(self, x, y):
        raise NotImplementedError

    def run(self, dataloader):
        for x, y in dataloader:
            loss, y_pred = self.batch_update(x, y)


class TrainEpoch(Epoch):
    def __init__(self, model, loss, optimizer):
        super().__init__(model, loss)
        self.optimizer = optimizer

    def batch_update(self, x, y):
        self.optimizer.zero_grad()
        prediction = self.model.forward(x)
        loss = self.loss(prediction, y)
        loss.backward()
        self.optimizer.step()
        return loss, prediction
