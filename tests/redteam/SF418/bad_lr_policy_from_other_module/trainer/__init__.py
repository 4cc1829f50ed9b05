"""A trainer package: the schedule is built in its own module."""
