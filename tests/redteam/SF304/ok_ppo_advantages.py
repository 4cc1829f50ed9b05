"""PPO advantage normalisation in float32 (ok)."""
def normalize_advantages(adv):
    return (adv - adv.mean()) / (adv.std() + 1e-8)
