"""Tutorial loop legacy autocast (must be reported)."""
from torch.cuda.amp import autocast as autocast

model = Net().cuda()
optimizer = optim.SGD(model.parameters(), lr=0.01)

for inputs, targets in data:
    optimizer.zero_grad()
    with autocast():  # expect: SF301
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
    loss.backward()
    optimizer.step()
