"""A ~1B-parameter Hugging Face `transformers` Llama built from a config (no weights, no download),
as a `stabfix verify --estimate` entry. Needs `pip install transformers`."""

import torch


def build_verify(device, batch_size=4):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=18,
                         num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=2048,
                         tie_word_embeddings=False, attn_implementation="sdpa")
    model = LlamaForCausalLM(config).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    ids = torch.randint(0, config.vocab_size, (batch_size, 2048), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step
