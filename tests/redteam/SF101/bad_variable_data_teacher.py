"""Old-style knowledge distillation: the teacher output is re-wrapped as Variable(out.data, requires_grad=True) for the KL target (bad)."""
import torch.nn.functional as F
from torch.autograd import Variable


def train_kd(student, teacher, loader, optimizer, T=4.0, alpha=0.9):
    student.train()
    teacher.eval()
    for data, labels in loader:
        data, labels = data.cuda(), labels.cuda()
        output = student(data)
        teacher_out = teacher(data)
        teacher_out = Variable(teacher_out.data, requires_grad=True)  # expect: SF101
        kd = F.kl_div(F.log_softmax(output / T, dim=1), F.softmax(teacher_out / T, dim=1), reduction="batchmean")
        loss = kd * (alpha * T * T) + F.cross_entropy(output, labels) * (1.0 - alpha)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
