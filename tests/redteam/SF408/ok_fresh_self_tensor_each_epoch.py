"""An explainer re-creates its Lagrange multiplier each epoch and an optimizer for it."""
import torch


class Explainer:
    def train(self, model, x, epochs, optimizer):
        for epoch in range(epochs):
            self.lambda_op = torch.tensor(self.init_lambda, requires_grad=True)
            optimizer_lambda = torch.optim.RMSprop([self.lambda_op], lr=self.lambda_lr, centered=True)
            optimizer.zero_grad()
            optimizer_lambda.zero_grad()
            loss = self.loss(model(x), self.lambda_op)
            loss.backward()
            optimizer.step()
            self.lambda_op.grad *= -1
            optimizer_lambda.step()
