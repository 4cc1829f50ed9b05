"""The fixed slot names the feature holders write under."""


def current_slot():
    return "current"
