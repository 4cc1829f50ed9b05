"""`from torch.autograd import set_detect_anomaly as anomaly` used as a context around the step."""
from torch.autograd import set_detect_anomaly as anomaly


def fit_batch(model, batch, optimizer):
    with anomaly(True):  # expect: SF203
        loss = model(batch).mean()
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
