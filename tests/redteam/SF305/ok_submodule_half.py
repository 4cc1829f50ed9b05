"""Only the frozen text encoder is cast to half; the trained head stays float32."""
import torch

text_encoder = load_text_encoder().cuda()
text_encoder.half()
text_encoder.requires_grad_(False)
head = ProjectionHead(768, 256).cuda()
optimizer = torch.optim.AdamW(head.parameters(), lr=1e-4)
for tokens, target in loader:
    with torch.no_grad():
        feats = text_encoder(tokens.cuda()).float()
    loss = torch.nn.functional.mse_loss(head(feats), target.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
