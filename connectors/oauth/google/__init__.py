"""allauth's Google provider, with its endpoints read from settings at request time."""
