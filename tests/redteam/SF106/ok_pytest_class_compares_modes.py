"""Near miss: a pytest class (no constructor) compares train and eval outputs over a few inputs and asserts."""
import torch


class TestDropoutModes:
    def test_eval_is_deterministic(self):
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
        model.eval()
        for _ in range(3):
            x = torch.randn(2, 4)
            assert torch.equal(model(x), model(x))
