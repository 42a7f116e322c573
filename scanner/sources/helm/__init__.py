"""Helm charts: which folders are charts, how one is rendered (``helm template``), and where each
rendered object comes from (its template file and the values that applied)."""
