"""HF Trainer saves through save_model (it picks the process); the config is only read."""
import json
import os

from transformers import Trainer


def run(model, args, ds):
    rank = int(os.environ.get("LOCAL_RANK", 0))
    trainer = Trainer(model=model, args=args, train_dataset=ds)
    trainer.train()
    trainer.save_model(args.output_dir)
    with open(os.path.join(args.output_dir, "config.json"), "r") as f:
        print(json.load(f))
