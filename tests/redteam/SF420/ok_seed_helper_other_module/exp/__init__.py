"""Package whose seeding helper lives in common.py."""
