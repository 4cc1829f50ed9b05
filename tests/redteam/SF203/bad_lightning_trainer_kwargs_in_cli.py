"""A Lightning CLI-style main builds its Trainer with anomaly detection hard-coded on."""
from lightning.pytorch import Trainer


def cli_main(args):
    model = build_model(args)
    trainer = Trainer(accelerator="gpu", devices=args.gpus, detect_anomaly=True)  # expect: SF203
    trainer.fit(model)
