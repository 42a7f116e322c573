"""The policy engine: a pure library (no file, Git, network, database or clock access)."""
