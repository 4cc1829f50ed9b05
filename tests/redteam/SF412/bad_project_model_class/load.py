"""The loader builds the model of the other file and loads it loosely."""
import torch

from models import Tagger


def load(path):
    tagger = Tagger()
    tagger.load_state_dict(torch.load(path, map_location="cpu"), strict=False)  # expect: SF412
    return tagger
