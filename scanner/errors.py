"""The scanner's error tree, the engine's error base, and source locations (stdlib only)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Location:
    """Where an input problem is: file, 1-based line and column, JSON pointer, document."""

    path: str | None = None
    line: int | None = None
    column: int | None = None
    pointer: str | None = None
    document: int | None = None

    def __str__(self) -> str:
        text = self.path or "<input>"
        if self.line is not None:
            text += f":{self.line}"
            if self.column is not None:
                text += f":{self.column}"
        extra = []
        if self.document is not None and self.line is None:
            extra.append(f"document {self.document}")
        if self.pointer:
            extra.append(self.pointer)
        if extra:
            text += f" ({', '.join(extra)})"
        return text


class ScannerError(Exception):
    """Base of every error a user can cause; carries a message and a location."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class ConfigError(ScannerError):
    """The config file is missing, has an unknown key or a bad value."""


class PolicyError(ScannerError):
    """A policy is invalid (unknown anchor, bad JMESPath, two rule types, ...)."""


class ManifestError(ScannerError):
    """A manifest is not valid YAML/JSON, not a Kubernetes object, or too large."""


class SourceError(ScannerError):
    """A source could not be read."""


class GitError(SourceError):
    """Clone, fetch or checkout failed (credentials never appear in the message)."""


class StoreError(ScannerError):
    """The report database is unreachable or not at the expected schema revision."""


class DatabaseLostError(StoreError):
    """The database could not be reached, or its connection was lost or stopped answering
    (after the retries and time limits the store allows); the command's exit status is 4."""


class ReportError(ScannerError):
    """A report could not be written or rendered."""


class SuiteError(ScannerError):
    """A ``kyverno test`` suite that cannot be loaded (reported per test file; the others run)."""


class EngineError(Exception):
    """Base of the errors raised inside the engine: an input it cannot evaluate (a bad
    expression, value, condition, look-up or budget overrun). Evaluation turns them into a
    rule's ``error`` result or absorbs them where Kyverno does; they never leave the engine
    but as results, except ``ValuesError`` from reading a values file."""
