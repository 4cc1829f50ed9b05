"""What a call or an expression is in torch's terms: a device and a move, a module's forward, an
optimizer, a loss and what it is made of, an output activation, a log-softmax or gather, a training
event (backward, step, zero_grad...).

Imports only from this layer and source. Laid out by tools/relayout_model.py;
tests/test_import_graph.py checks it.
"""
