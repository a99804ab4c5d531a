"""Helpers shared by the benchmark management commands."""
