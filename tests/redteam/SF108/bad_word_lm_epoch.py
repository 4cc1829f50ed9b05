"""Word-level LM epoch: the hidden state from the previous batch is reused with no repackaging (bad)."""
import torch.nn as nn

criterion = nn.CrossEntropyLoss()


def train_epoch(model, batches, optimizer, batch_size):
    model.train()
    hidden = model.init_hidden(batch_size)
    for data, targets in batches:
        model.zero_grad()
        output, hidden = model(data, hidden)  # expect: SF108
        loss = criterion(output.view(-1, output.size(-1)), targets)
        loss.backward(retain_graph=True)
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
