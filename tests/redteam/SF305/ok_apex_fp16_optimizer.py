"""apex's FP16_Optimizer wraps the optimizer: it keeps float32 master weights and scales the loss itself."""
import torch
from apex.fp16_utils import FP16_Optimizer

model = torch.nn.Linear(1024, 16).cuda().half()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)
for t in range(200):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x).float(), y.float())
    optimizer.backward(loss)
    optimizer.step()
