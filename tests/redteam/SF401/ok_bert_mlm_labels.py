"""BERT masked-LM: labels are a clone of input_ids, then input_ids are masked in place with the mask token (legitimate; the model sees the masked copy)."""
import torch


def mlm_step(model, optimizer, input_ids, mask_token_id, mlm_prob=0.15):
    labels = input_ids.clone()
    prob = torch.full(labels.shape, mlm_prob, device=labels.device)
    masked = torch.bernoulli(prob).bool()
    labels[~masked] = -100
    input_ids[masked] = mask_token_id
    logits = model(input_ids).logits
    loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
