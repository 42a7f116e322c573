"""PostgreSQL sessions that neither hang nor give up at the first refusal.

* Connecting gives up after ``connect_timeout`` seconds per attempt, and is tried again
  (with growing pauses) while the server is unreachable, for up to ``reconnect_for``
  seconds: a server restarting during a scan is waited for. A refusal the server gave
  (bad password, no such database) is not retried.
* Every statement is bounded by the server (``statement_timeout``) and, should the server
  stop answering altogether (frozen, or a network that drops packets), by this client
  ``connect_timeout`` seconds later: the connection is closed and the statement fails as a
  lost connection, never a wait for the whole outage.

The settings come from the database URL's query (``?connect_timeout=5&statement_timeout=60
&reconnect_for=120``, in seconds; ``connect_timeout`` is libpq's own parameter); the last two
are taken out of the URL before it reaches the driver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import URL

from scanner.errors import StoreError

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_STATEMENT_TIMEOUT = 300.0
DEFAULT_RECONNECT_FOR = 60.0
SCANNER_PARAMETERS = ("statement_timeout", "reconnect_for")
"""URL query parameters this module reads and the driver does not know."""

# the server's refusals of a connection: retrying cannot help
_PERMANENT = ("password authentication failed", "no password supplied", "does not exist",
              "no pg_hba.conf entry", "permission denied", "authentication")


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How long to wait for a connection, a statement, and a server that is away (seconds;
    a statement timeout of 0 means none, as in PostgreSQL)."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT
    reconnect_for: float = DEFAULT_RECONNECT_FOR

    @property
    def answer_within(self) -> float | None:
        """How long this client waits for any answer before it takes the server for lost."""
        return self.statement_timeout + self.connect_timeout if self.statement_timeout else None


def split_limits(url: URL, describe: str) -> tuple[URL, SessionLimits]:
    """The URL for the driver (with a ``connect_timeout``) and the limits it asked for."""
    values: dict[str, float] = {}
    for name, default in (("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
                          ("statement_timeout", DEFAULT_STATEMENT_TIMEOUT),
                          ("reconnect_for", DEFAULT_RECONNECT_FOR)):
        raw = url.query.get(name)
        if isinstance(raw, tuple):
            raw = raw[-1]
        try:
            value = float(raw) if raw is not None else default
        except ValueError:
            value = -1.0
        if value < 0 or value != value or (name == "connect_timeout" and value == 0):
            raise StoreError(f"database {describe}: {name} must be a number of seconds "
                             f"({'above' if name == 'connect_timeout' else 'at least'} 0), not {raw!r}")
        values[name] = value
    limits = SessionLimits(**values)
    driver_url = url.difference_update_query(SCANNER_PARAMETERS).update_query_dict(
        {"connect_timeout": str(max(1, round(limits.connect_timeout)))})
    return driver_url, limits


def connect(cargs: Any, cparams: dict[str, Any], limits: SessionLimits) -> Any:
    """A psycopg connection bounded by ``limits``; tried again while the server is unreachable."""
    import psycopg

    deadline = time.monotonic() + limits.reconnect_for
    pause = 0.5
    while True:
        try:
            connection = _bounded_class().connect(*cargs, **cparams)
            break
        except psycopg.OperationalError as e:
            if any(text in str(e) for text in _PERMANENT) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 5.0)
    connection.answer_within = limits.answer_within
    return connection


_BOUNDED: Any = None


def _bounded_class() -> Any:
    """``psycopg.Connection`` whose every wait for the server has a time limit (made on first
    use: psycopg loads only for PostgreSQL)."""
    global _BOUNDED
    if _BOUNDED is not None:
        return _BOUNDED
    import psycopg
    from psycopg import errors

    wait_timeout = getattr(errors, "_WaitTimeout", None)

    class BoundedConnection(psycopg.Connection):  # type: ignore[type-arg]
        answer_within: float | None = None

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            if timeout is None:
                timeout = self.answer_within
            try:
                return super().wait(gen, interval, timeout)
            except psycopg.OperationalError as e:
                if wait_timeout is None or not isinstance(e, wait_timeout):
                    raise
                self.pgconn.finish()  # the session is lost: the pool discards it
                raise psycopg.OperationalError(
                    f"the server did not answer within {timeout:g} s: connection closed "
                    "(the server is frozen or the network drops packets)") from None

    _BOUNDED = BoundedConnection
    return BoundedConnection
