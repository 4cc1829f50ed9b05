"""Reusable codemods: builders that turn model facts into `Fix` objects, shared by the rules that report them."""
