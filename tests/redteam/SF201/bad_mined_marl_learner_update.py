"""Mined shape: a multi-agent learner's update() (called in a loop of training steps) clips, steps and empties the CUDA cache on every update (bad)."""
import torch


class MixerLearner:
    def __init__(self, agent_net, mixer_net, buffer, lr=5e-4):
        self.agent_net = agent_net
        self.mixer_net = mixer_net
        self.buffer = buffer
        self.optimizer = torch.optim.Adam(list(agent_net.parameters()) + list(mixer_net.parameters()), lr=lr)
        self.updates = 0

    def update(self):
        batch = self.buffer.sample()
        q_total = self.mixer_net(self.agent_net(batch["obs"]), batch["state"])
        loss = ((q_total - batch["target"]) ** 2 * batch["mask"]).sum() / batch["mask"].sum()
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(self.agent_net.parameters()) + list(self.mixer_net.parameters()), 10.0)
        self.optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        self.updates += 1
        return loss.item()

    def run_updates(self, count):
        return [self.update() for _ in range(count)]
