"""The errors of Kyverno's JMESPath dialect."""

from __future__ import annotations


class JMESPathError(Exception):
    """An expression that cannot be parsed, names an unknown function, or fails to evaluate."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownKeyError(JMESPathError):
    """Kyverno's "not found" error: a key absent from an object on a propagating path."""

    def __init__(self, key: str) -> None:
        super().__init__(f'Unknown key "{key}" in path')
        self.key = key
