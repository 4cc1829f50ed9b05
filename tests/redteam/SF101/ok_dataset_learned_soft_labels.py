"""Near miss of bad_mined_dataset_attribute_labels: the dataset's per-sample soft labels require grad because they
are learned with the model (label refinement); the dataset object hands them to the optimizer (legitimate)."""
import torch
from torch.utils.data import DataLoader, Dataset


class RefinedLabels(Dataset):
    def __init__(self, inputs, soft_labels):
        self.inputs = torch.tensor(inputs)
        self.soft_labels = torch.tensor(soft_labels, requires_grad=True)

    def __len__(self):
        return len(self.soft_labels)

    def __getitem__(self, k):
        return self.inputs[k], self.soft_labels[k]


def train(net, inputs, soft_labels, epochs=10):
    data = RefinedLabels(inputs, soft_labels)
    batches = DataLoader(data, batch_size=32, shuffle=True)
    opt = torch.optim.Adam(list(net.parameters()) + [data.soft_labels], lr=1e-3)
    mse = torch.nn.MSELoss()
    for _ in range(epochs):
        for x, q in batches:
            opt.zero_grad()
            mse(net(x), q).backward()
            opt.step()
