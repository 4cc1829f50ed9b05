"""A launcher, as `accelerate launch` or a shell wrapper is: imports torch, runs the training script in
a child process and fails when it fails."""

import subprocess
import sys

import torch  # noqa: F401 - launchers import torch too

subprocess.run([sys.executable, *sys.argv[1:]], check=True)
