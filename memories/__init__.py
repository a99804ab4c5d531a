"""Memories: storage, chunking, embedding, ingestion and retrieval."""
