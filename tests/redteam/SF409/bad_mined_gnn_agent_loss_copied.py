"""Mined (GNN + DQN power control): the agent's loss is detached, passed through a criterion, re-leafed and backpropagated into the GNN."""
import torch


def train_gnn(gnn, agent, episodes, criterion):
    opt = torch.optim.Adam(gnn.parameters(), lr=1e-3)
    for graph in episodes:
        emb = gnn(graph)
        agent.update(emb)
        loss = agent.loss
        loss = loss.clone().detach()
        loss = criterion(torch.tensor(loss), torch.tensor(0.0))
        loss = torch.tensor(loss, requires_grad=True)  # expect: SF409
        opt.zero_grad()
        loss.backward()
        opt.step()
