"""allauth's Notion provider, with its endpoints read from settings at request time."""
