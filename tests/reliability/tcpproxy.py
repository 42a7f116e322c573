"""A TCP proxy on 127.0.0.1 that a test controls: forward, freeze (hold every byte, keep every
connection open, as a stopped server does), or restart (drop every connection and refuse new
ones for a while, as a restarting server does). The shared PostgreSQL server is never touched."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.listener.listen(64)
        self.frozen = threading.Event()
        self.refusing = threading.Event()
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._timer: threading.Timer | None = None
        self._threads = [threading.Thread(target=self._accept, daemon=True),
                         threading.Thread(target=self._pump, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))

    def _pump(self) -> None:
        while not self.closed.is_set():
            if self.frozen.is_set():
                time.sleep(0.02)
                continue
            with self._lock:
                pairs = list(self._pairs)
            if not pairs:
                time.sleep(0.01)
                continue
            selector = selectors.DefaultSelector()
            for a, b in pairs:
                with contextlib.suppress(ValueError, OSError):
                    selector.register(a, selectors.EVENT_READ, (a, b))
                    selector.register(b, selectors.EVENT_READ, (b, a))
            try:
                events = selector.select(timeout=0.05)
            finally:
                selector.close()
            for key, _ in events:
                source, sink = key.data
                try:
                    data = source.recv(65536)
                    if not data:
                        raise OSError("closed")
                    sink.sendall(data)
                except OSError:
                    self._drop(source, sink)

    def _drop(self, a: socket.socket, b: socket.socket) -> None:
        with self._lock:
            self._pairs = [p for p in self._pairs if a not in p and b not in p]
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.close()

    def freeze(self) -> None:
        self.frozen.set()

    def thaw(self) -> None:
        self.frozen.clear()

    def restart(self, down_for: float) -> None:
        """Drop every connection, refuse new ones for ``down_for`` seconds, then accept again."""
        self.refusing.set()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
        self._timer = threading.Timer(down_for, self.refusing.clear)
        self._timer.daemon = True  # a test that ends before it must not wait for it
        self._timer.start()

    def close(self) -> None:
        self.closed.set()
        if self._timer is not None:
            self._timer.cancel()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.close()
