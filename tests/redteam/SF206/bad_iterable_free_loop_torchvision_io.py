"""Video frames decoded by torchvision.io per item; the loader is a module-level script with .cuda() moves."""
import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class Clips(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        frames, _, _ = torchvision.io.read_video(self.paths[index], pts_unit="sec")
        return frames[:16].permute(3, 0, 1, 2).float() / 255


model = torch.nn.Conv3d(3, 8, 3).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
clips = Clips(["v1.mp4", "v2.mp4"])
loader = DataLoader(clips, batch_size=2)  # expect: SF206
for clip in loader:
    opt.zero_grad()
    model(clip.cuda()).pow(2).mean().backward()
    opt.step()
