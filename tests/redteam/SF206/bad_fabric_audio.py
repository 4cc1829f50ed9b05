"""Fabric on GPUs: the loader over audio files is set up by Fabric, which places the batches; no workers."""
import lightning as L
import soundfile as sf
import torch
from torch.utils.data import DataLoader, Dataset


class Speech(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        audio, _ = sf.read(self.files[i], dtype="float32")
        return torch.from_numpy(audio[:32000])


def main(model):
    fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
    fabric.launch()
    loader = DataLoader(Speech(["a.wav", "b.wav"]), batch_size=4)  # expect: SF206
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    for audio in loader:
        loss = model(audio).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
