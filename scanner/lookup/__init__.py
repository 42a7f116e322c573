"""The offline cluster a policy's look-ups see: one per configured cluster (``cluster``), and the
query of an API list path as a real API server applies it (``query``)."""

from scanner.lookup.cluster import ResourceLookup, cluster_of, param_kinds, policies_need_lookup

__all__ = ["ResourceLookup", "cluster_of", "param_kinds", "policies_need_lookup"]
