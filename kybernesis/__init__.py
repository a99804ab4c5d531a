"""Kybernesis: the project package (settings, URLs, API wiring, embedded database)."""
