"""Inference entry point that loads a checkpoint and predicts a folder of inputs."""
import torch


def main(model, batches, out_path):
    model.load_state_dict(torch.load("best.pt", map_location="cpu"))
    model.eval()
    results = []
    for batch in batches:
        probs = model(batch).softmax(-1)  # expect: SF106
        results.append(probs.argmax(-1).tolist())
    torch.save(results, out_path)
