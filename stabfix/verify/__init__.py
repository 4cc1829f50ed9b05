"""`stabfix verify`: run a short, seeded, instrumented smoke-train of the user's real training step.

The user's code runs in a child process (`stabfix.verify.child`); the parent (`runner`) streams its
per-step measurements, `analysis` turns them into health checks and budget verdicts, `render` prints
them and `baseline` compares two runs. Nothing in this package imports torch at import time except
the child-only modules (`child`, `tracker`, `probes`, `holders`).
"""
