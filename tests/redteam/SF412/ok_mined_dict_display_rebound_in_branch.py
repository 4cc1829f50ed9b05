"""Mined (multitask prompt tuning init): the state dict read from a file is rebuilt in each branch; the branch that keeps
only the shared embedding binds a dict written in the code and loads it loosely on purpose. The earlier bindings of
the name (the file) cannot reach that load: the display is bound before it in the same branch."""
import torch
import torch.nn as nn


class PromptEncoder(nn.Module):
    def __init__(self, tokens, width, path, mode):
        super().__init__()
        self.embedding = nn.Embedding(tokens, width)
        self.task_cols = nn.Parameter(torch.zeros(4, width))
        if mode in ("all", "shared"):
            state = torch.load(path, map_location="cpu")
        if mode == "all":
            state = {"embedding.weight": state["embeddings"], "task_cols": state["task_cols"]}
            self.load_state_dict(state, strict=True)
        elif mode == "shared":
            state = {"embedding.weight": state["embeddings"]}

            self.load_state_dict(state, strict=False)
