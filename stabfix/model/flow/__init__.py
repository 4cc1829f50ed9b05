"""Where values go and what they carry: what an expression is and where it lives, autograd history,
where a value is handed, later uses of a held value, tensors that alias or change in place, graph
cuts, gradient use, recurrent state, parameter origins and in-place updates.

Imports only from this layer and source, calls. Laid out by tools/relayout_model.py;
tests/test_import_graph.py checks it.
"""
