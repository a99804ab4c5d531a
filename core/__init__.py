"""Shared, app-agnostic pieces every app may use: env parsing, owned querysets, error schemas,
API tokens and bearer auth, and the pool of forked workers. Imports nothing from the apps above it."""
