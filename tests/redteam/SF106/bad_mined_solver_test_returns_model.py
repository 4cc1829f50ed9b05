"""Mined shape: a solver module whose test() switches to eval and sums the criterion over the validation loader with autograd on, returning the model and the mean loss to the epoch loop (bad)."""
def train(model, criterion, optimizer, train_loader, device):
    running = 0
    for imgs, classes in train_loader:
        imgs, classes = imgs.to(device), classes.to(device)
        output = model(imgs)
        loss = criterion(output, classes)
        running += loss.item() * output.size(0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, optimizer, running / len(train_loader.dataset)


def test(model, criterion, valid_loader, device):
    model.eval()
    running = 0
    for imgs, classes in valid_loader:
        imgs, classes = imgs.to(device), classes.to(device)
        output = model(imgs)  # expect: SF106
        loss = criterion(output, classes)
        running += loss.item() * output.size(0)
    return model, running / len(valid_loader.dataset)


def fit(model, criterion, optimizer, train_loader, valid_loader, device, epochs):
    for epoch in range(epochs):
        model.train()
        model, optimizer, train_loss = train(model, criterion, optimizer, train_loader, device)
        model, valid_loss = test(model, criterion, valid_loader, device)
        print(epoch, train_loss, valid_loss)
