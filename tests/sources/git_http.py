"""A Git HTTP server for tests: ``git http-backend`` behind Basic authentication, on localhost."""

from __future__ import annotations

import base64
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class GitHttpServer(ThreadingHTTPServer):
    def __init__(self, root: Path, user: str, password: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.authorizations: list[str | None] = []  # the Authorization header of each request

    def url(self, repo: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{repo}"


class _Handler(BaseHTTPRequestHandler):
    server: GitHttpServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        auth = self.headers.get("Authorization")
        self.server.authorizations.append(auth)
        if auth != self.server.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {"GIT_PROJECT_ROOT": str(self.server.root), "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
               "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": "user",
               "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "GIT_CONFIG_NOSYSTEM": "1"}
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def git_http_server(root: Path, user: str, password: str) -> Iterator[GitHttpServer]:
    server = GitHttpServer(root, user, password)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
