"""Reusable codemods: builders that turn model facts into `Fix` objects for the rules that report them."""
