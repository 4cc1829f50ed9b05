"""Reading one file's source: the traversal, syntax helpers, positions, the definitions around a node,
imports, names and their bindings in Python's scopes, the sites of statements, and the word lists.

Imports no other layer. Laid out by tools/relayout_model.py; tests/test_import_graph.py checks it.
"""
