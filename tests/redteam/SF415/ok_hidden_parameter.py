"""Blocks checkpointed over a hidden state handed in by the caller: not shown, so silent."""
from torch.utils.checkpoint import checkpoint


def run_blocks(blocks, hidden_states, attention_mask):
    for block in blocks:
        hidden_states = checkpoint(block, hidden_states, attention_mask)
    return hidden_states
