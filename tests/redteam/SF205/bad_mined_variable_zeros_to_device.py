"""Mined shape: an LSTM regressor's forward builds its initial states as `Variable(torch.zeros(...)).to(device).squeeze()` on every call (the legacy wrapper holds the host tensor as it is) (bad)."""
import torch
from torch.autograd import Variable

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LSTMRegressor(torch.nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = torch.nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = torch.nn.Linear(hidden_size, output_size)

    def forward(self, x):
        h_0 = Variable(torch.zeros(self.num_layers, x.size(0), self.hidden_size)).to(device).squeeze()  # expect: SF205
        c_0 = Variable(torch.zeros(self.num_layers, x.size(0), self.hidden_size)).to(device).squeeze()  # expect: SF205
        _, (h_out, _) = self.lstm(x, (h_0, c_0))
        return self.fc(h_out.view(-1, self.hidden_size))
