"""Facts for one concern each, built on the layers below: mixed precision and dtypes, device memory and
long-lived containers, host-accelerator syncs, token generation, parameter-sized buffers, adapters,
distributed runs.

Imports only from this layer and source, calls, flow, training, functions. Laid out by
tools/relayout_model.py; tests/test_import_graph.py checks it.
"""
