"""EMA teacher parameters updated from themselves under no_grad (not a graph carried)."""
import torch


def train(student, teacher, loader, opt, crit, m=0.99):
    for x, y in loader:
        loss = crit(student(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pt, ps in zip(teacher.parameters(), student.parameters()):
                pt.mul_(m).add_(ps, alpha=1 - m)
