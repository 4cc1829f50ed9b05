"""What each function of the file does, as its callers see it: node-free summaries of what it returns
and what it does to its arguments and to `self`, followed any number of calls deep and into other
files of the scan.

Imports only from this layer and source, calls, flow, training. Laid out by tools/relayout_model.py;
tests/test_import_graph.py checks it.
"""
