"""Ports of the Go and Kubernetes code Kyverno relies on (time, durations, quantities, semver,
fmt, regexp, path), so values compare and print as they do in Kyverno."""
