"""Distillation: the frozen teacher is half, the student (trained) stays float32."""
import torch

teacher = load_teacher().cuda().half().eval()
student = Student().cuda()
optimizer = torch.optim.AdamW(student.parameters(), lr=5e-4)
for x, _ in loader:
    with torch.no_grad():
        soft = teacher(x.cuda().half()).float().softmax(-1)
    loss = torch.nn.functional.kl_div(student(x.cuda()).log_softmax(-1), soft, reduction="batchmean")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
