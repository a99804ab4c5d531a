"""A Django database engine for the embedded PostgreSQL: the server starts on the first connection, not at import."""
