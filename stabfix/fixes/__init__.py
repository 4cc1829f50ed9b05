"""Reusable codemods: node rewrites that more than one rule's fix is built from."""
