"""Local HTTP servers that answer like Google Drive v3 and the Notion API, for the connector tests."""
