"""A lab package: runners inherit their seeding from base.py."""
