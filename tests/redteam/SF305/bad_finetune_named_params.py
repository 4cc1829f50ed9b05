"""A fine-tuning script halves the classifier in place, then trains every parameter that requires grad."""
import torch
from torch.optim import AdamW

classifier = load_pretrained("resnet50")
classifier.half()  # expect: SF305
params = [p for p in classifier.parameters() if p.requires_grad]
optimizer = AdamW(params, lr=3e-5)
for images, labels in train_loader:
    logits = classifier(images.cuda().half())
    loss = torch.nn.functional.cross_entropy(logits.float(), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
