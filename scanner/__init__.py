"""scanner: Kyverno validate policies over GitOps repositories and cluster exports."""

__version__ = "0.1.0"
