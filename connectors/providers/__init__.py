"""Remote APIs: one client per provider on a shared base (HTTP, retries, tokens, pagination)."""
