"""GPU catalog for `verify --estimate --gpu NAME`: total device memory per card (pure Python).

Numbers are the cards' nominal memory (GB = 10^9 bytes as vendors state it, GiB where the vendor
uses binary units); `nvidia-smi` shows slightly less, the estimate's non-tensor margin covers the
CUDA context on top.
"""

from __future__ import annotations

GB = 1000**3
GIB = 1024**3

# name -> (display name, bytes)
GPUS: dict[str, tuple[str, int]] = {
    # data centre
    "h200-141gb": ("NVIDIA H200 141GB", 141 * GB),
    "h100-80gb": ("NVIDIA H100 80GB", 80 * GIB),
    "h100-94gb": ("NVIDIA H100 NVL 94GB", 94 * GB),
    "h20-96gb": ("NVIDIA H20 96GB", 96 * GB),
    "gh200-96gb": ("NVIDIA GH200 96GB", 96 * GB),
    "b200-180gb": ("NVIDIA B200 180GB", 180 * GB),
    "a100-80gb": ("NVIDIA A100 80GB", 80 * GIB),
    "a100-40gb": ("NVIDIA A100 40GB", 40 * GIB),
    "a10-24gb": ("NVIDIA A10 24GB", 24 * GIB),
    "a10g-24gb": ("NVIDIA A10G 24GB", 24 * GIB),
    "l40s-48gb": ("NVIDIA L40S 48GB", 48 * GIB),
    "l4-24gb": ("NVIDIA L4 24GB", 24 * GIB),
    "v100-32gb": ("NVIDIA V100 32GB", 32 * GIB),
    "v100-16gb": ("NVIDIA V100 16GB", 16 * GIB),
    "t4-16gb": ("NVIDIA T4 16GB", 16 * GIB),
    "a6000-48gb": ("NVIDIA RTX A6000 48GB", 48 * GIB),
    "rtx6000ada-48gb": ("NVIDIA RTX 6000 Ada 48GB", 48 * GIB),
    "mi300x-192gb": ("AMD Instinct MI300X 192GB", 192 * GB),
    "mi250x-128gb": ("AMD Instinct MI250X 128GB", 128 * GB),
    # consumer
    "rtx5090-32gb": ("NVIDIA GeForce RTX 5090 32GB", 32 * GIB),
    "rtx4090-24gb": ("NVIDIA GeForce RTX 4090 24GB", 24 * GIB),
    "rtx4080-16gb": ("NVIDIA GeForce RTX 4080 16GB", 16 * GIB),
    "rtx4070ti-12gb": ("NVIDIA GeForce RTX 4070 Ti 12GB", 12 * GIB),
    "rtx4060ti-16gb": ("NVIDIA GeForce RTX 4060 Ti 16GB", 16 * GIB),
    "rtx3090-24gb": ("NVIDIA GeForce RTX 3090 24GB", 24 * GIB),
    "rtx3080-10gb": ("NVIDIA GeForce RTX 3080 10GB", 10 * GIB),
    "rtx3060-12gb": ("NVIDIA GeForce RTX 3060 12GB", 12 * GIB),
}

ALIASES = {"h100": "h100-80gb", "h200": "h200-141gb", "a100": "a100-80gb", "b200": "b200-180gb",
           "l40s": "l40s-48gb", "l4": "l4-24gb", "t4": "t4-16gb", "a10g": "a10g-24gb", "a10": "a10-24gb",
           "rtx4090": "rtx4090-24gb", "4090": "rtx4090-24gb", "rtx3090": "rtx3090-24gb", "3090": "rtx3090-24gb",
           "rtx5090": "rtx5090-32gb", "5090": "rtx5090-32gb", "mi300x": "mi300x-192gb", "v100": "v100-32gb"}


def normalize(name: str) -> str:
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = key.replace("nvidia-", "").replace("geforce-", "").replace("rtx-", "rtx")
    return ALIASES.get(key, key)


def lookup(name: str) -> tuple[str, str, int] | None:
    """(catalog key, display name, bytes) for a card name such as 'h100-80gb' or 'H100', or None."""
    key = normalize(name)
    found = GPUS.get(key)
    return (key, found[0], found[1]) if found else None


def names() -> list[str]:
    return list(GPUS)
