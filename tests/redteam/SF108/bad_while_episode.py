"""Recurrent agent updated every env step inside a while loop, hidden carried (bad)."""
import torch


def run_episode(env, agent, optimizer):
    obs, done = env.reset(), False
    hidden = agent.initial_hidden()
    while not done:
        q, hidden = agent(obs, hidden)  # expect: SF108
        action = q.argmax().item()
        obs, reward, done, _ = env.step(action)
        loss = (q.max() - reward) ** 2
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
