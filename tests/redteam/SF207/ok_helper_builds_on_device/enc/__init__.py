"""A package whose helper builds the table directly on the requested device."""
