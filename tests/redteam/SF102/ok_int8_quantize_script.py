"""Post-training quantisation script: computes int8 weights and scales per tensor into dicts once and saves them (one-shot, not a memo)."""
import torch


@torch.no_grad()
def quantize_state_dict(path, out):
    state = torch.load(path, map_location="cpu", weights_only=True)
    qweights, scales = {}, {}
    for name, w in state.items():
        if w.dim() < 2:
            qweights[name] = w
            continue
        scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127.0
        qweights[name] = (w / scale).round().clamp(-127, 127).to(torch.int8)
        scales[name] = scale.squeeze(1)
    torch.save({"weights": qweights, "scales": scales}, out)


if __name__ == "__main__":
    quantize_state_dict("model.pt", "model.int8.pt")
