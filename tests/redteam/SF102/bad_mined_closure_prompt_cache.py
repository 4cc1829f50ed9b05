"""Mined shape: a batch-scoring script keeps a function-local dict of CLIP text features, filled by a nested closure under no_grad on the GPU with one entry per new prompt and never cleared (bad)."""
import torch
import torch.nn.functional as F


def score_folders(folders, clip_model, processor, device, dtype=torch.float16):
    prompt_vectors = {}

    def vector_for(prompt):
        if prompt not in prompt_vectors:
            tokens = processor(text=[prompt], return_tensors="pt", padding=True)
            tokens = {k: v.to(device) for k, v in tokens.items()}
            with torch.no_grad():
                vec = clip_model.get_text_features(**tokens).float()
                vec = F.normalize(vec, p=2, dim=-1).to(dtype)
            prompt_vectors[prompt] = vec  # expect: SF102
        return prompt_vectors[prompt]

    scores = []
    for folder in folders:
        text_vec = vector_for(folder["prompt"])
        with torch.no_grad():
            image_vec = clip_model.get_image_features(pixel_values=folder["pixels"].to(device)).to(dtype)
        scores.append((image_vec @ text_vec.T).squeeze().item())
    return scores
