"""Connector accounts and synced items (arrive with the connectors issue)."""
