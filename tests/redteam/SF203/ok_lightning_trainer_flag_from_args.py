"""The Trainer flag comes from the command line."""
import argparse

import pytorch_lightning as pl

parser = argparse.ArgumentParser()
parser.add_argument("--detect-anomaly", action="store_true")
args = parser.parse_args()
trainer = pl.Trainer(max_epochs=3, detect_anomaly=args.detect_anomaly)
trainer.fit(Model())
