"""DQN tutorial style: the Huber loss re-created with `torch.tensor(..., requires_grad=True)` before backward (bad)."""
import torch
import torch.nn.functional as F


def optimize_model(policy_net, target_net, optimizer, batch, gamma):
    state_action_values = policy_net(batch.state).gather(1, batch.action)
    next_state_values = target_net(batch.next_state).max(1)[0].detach()
    expected = batch.reward + gamma * next_state_values
    loss = F.smooth_l1_loss(state_action_values, expected.unsqueeze(1))
    loss = torch.tensor(loss.item(), requires_grad=True)  # expect: SF409
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
