"""accelerator.reduce in a function that accelerate runs on the main process only."""

from accelerate import Accelerator

accelerator = Accelerator()


@accelerator.on_main_process
def log_metrics(metrics):
    totals = accelerator.reduce(metrics, reduction="mean")  # expect: SF504
    print(totals)
