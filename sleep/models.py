"""Sleep runs and their step runs (arrive with the sleep-agent issue)."""
