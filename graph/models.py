"""Entities, mentions, relationships and memory links (arrive with the knowledge-graph issue)."""
