"""Mined shape: eval_epoch() never switches modes and runs model.forward over the iterator with legacy volatile Variables (ignored); main() trains the same model through train_epoch() (bad)."""
import math
from torch.autograd import Variable


def eval_epoch(model, data_iter, criterion, cuda=False):
    total_loss = 0.0
    total_words = 0.0
    for data, target in data_iter:
        data = Variable(data, volatile=True)
        target = Variable(target, volatile=True)
        if cuda:
            data, target = data.cuda(), target.cuda()
        target = target.contiguous().view(-1)
        pred = model.forward(data)  # expect: SF106
        loss = criterion(pred, target)
        total_loss += loss.item()
        total_words += data.size(0) * data.size(1)
    return math.exp(total_loss / total_words)


def train_epoch(model, data_iter, criterion, optimizer):
    for data, target in data_iter:
        loss = criterion(model(data), target.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, train_iter, val_iter, criterion, optimizer):
    for epoch in range(10):
        train_epoch(model, train_iter, criterion, optimizer)
        print(eval_epoch(model, val_iter, criterion))
