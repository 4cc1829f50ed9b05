"""Config keys named like api (must stay silent)."""
def build(cfg):
    opts = {"torch.cuda.amp.autocast": cfg.train.amp}
    if cfg.torch.cuda.amp.GradScaler:
        return opts
    return None
