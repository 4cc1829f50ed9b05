"""Training structure: step loops and step functions, the gates that make code run on only some steps,
train/eval mode switches, gradient accumulation, and state a loop carries into its next iteration.

Imports only from this layer and source, calls, flow. Laid out by tools/relayout_model.py;
tests/test_import_graph.py checks it.
"""
