"""scanner: Kyverno validate policies over GitOps repositories and cluster exports."""

__version__ = "0.1.0"

from scanner.compiled import choose as _choose_compiled

COMPILED = _choose_compiled()
"""Whether the compiled modules run (``scanner.compiled``); False where the sources do."""
