"""Connectors: Google Drive and Notion syncs into memories."""
