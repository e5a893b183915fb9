"""Tasks: WebArena-style task JSON, families (templates), evaluators, oracles, splits."""
