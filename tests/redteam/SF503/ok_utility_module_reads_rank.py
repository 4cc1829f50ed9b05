"""A utility module that reads RANK for its own logging; its file helpers are called from guarded code elsewhere."""
import json
import os

RANK = int(os.getenv("RANK", "-1"))


def yaml_like_save(path, data):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data))


def log_once(message):
    if RANK in {-1, 0}:
        print(message)
