def normalize_advantages(adv):
    return (adv - adv.mean()) / (adv.std() + 1e-8)
