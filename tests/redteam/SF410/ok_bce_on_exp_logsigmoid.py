"""binary_cross_entropy on exp(logsigmoid(scores)): probabilities, which is what BCE expects."""
import torch
import torch.nn.functional as F

for x, y in loader:
    probs = torch.exp(F.logsigmoid(model(x)))
    loss = F.binary_cross_entropy(probs, y)
    loss.backward()
