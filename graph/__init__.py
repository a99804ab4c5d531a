"""The knowledge graph: entities, relationships and memory links."""
