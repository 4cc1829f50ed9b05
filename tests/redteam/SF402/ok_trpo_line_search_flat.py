"""TRPO-style line search: parameters are set from a flat vector (old params + step) and restored from the saved flat vector, no .grad math."""
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters


def line_search(policy, surrogate, full_step, expected_improve, max_backtracks=10):
    old_params = parameters_to_vector(policy.parameters()).detach().clone()
    with torch.no_grad():
        old_loss = surrogate()
        for frac in 0.5 ** torch.arange(max_backtracks, dtype=torch.float32):
            vector_to_parameters(old_params + frac * full_step, policy.parameters())
            improve = old_loss - surrogate()
            if improve > 0 and improve / (expected_improve * frac) > 0.1:
                return True
        vector_to_parameters(old_params, policy.parameters())
    return False
