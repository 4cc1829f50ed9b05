"""accelerate script: a dict local to main() keeps frozen-encoder outputs per image path on accelerator.device across the whole training loop (bad)."""
import torch
from accelerate import Accelerator


def main(model, vision_encoder, loader, optimizer, epochs=3):
    accelerator = Accelerator()
    model, vision_encoder, optimizer, loader = accelerator.prepare(model, vision_encoder, optimizer, loader)
    image_feats = {}
    for epoch in range(epochs):
        for batch in loader:
            feats = []
            for path, img in zip(batch["path"], batch["pixel_values"]):
                if path not in image_feats:
                    with torch.no_grad():
                        image_feats[path] = vision_encoder(img[None]).to(accelerator.device)  # expect: SF102
                feats.append(image_feats[path])
            loss = model(torch.cat(feats), batch["input_ids"]).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
