"""Kyverno's ``validate.cel`` rules on the CEL C++ runtime, with the Kubernetes CEL libraries."""
