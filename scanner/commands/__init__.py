"""Click commands, one module per command; imported lazily by ``scanner.cli``."""
