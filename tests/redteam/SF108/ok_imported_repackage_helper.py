"""Near miss: the step function repackages the stored hidden state with a helper imported from a library (what it does is not shown: unknown is never proof)."""
from shiba.utils import repackage_hidden


def rnn_step(trainer, batch):
    hidden = repackage_hidden(trainer.state["hidden"])
    inputs, targets = batch
    inputs, targets = inputs.to(trainer.device), targets.to(trainer.device)
    outputs, hidden = trainer.model(inputs, hidden)
    trainer.state["hidden"] = hidden
    loss = trainer.criterion(outputs.flatten(0, 1), targets.flatten())
    loss.backward()
    trainer.optimizer.step()
    return loss
