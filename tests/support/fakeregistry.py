"""A fake OCI distribution registry on 127.0.0.1 (for ``cfgcheck.oci`` and ``cfgcheck upgrade``).

Manifests are served at ``/v2/<name>/manifests/<tag>`` only with a bearer token, which ``/token``
hands out anonymously (the Docker Hub / ghcr.io flow): an unauthenticated request gets ``401`` with a
``WWW-Authenticate: Bearer realm=...,service=...,scope=...`` challenge. ``digest_header=False`` makes
HEAD omit ``Docker-Content-Digest`` (clients must then GET and hash the manifest); ``redirect_to`` (a
base URL) answers an authenticated manifest request with a redirect there (a registry handing off to
a CDN or to another registry); ``anonymous=True`` serves manifests without a token. Every request is
recorded (method, path, headers)."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

INDEX = "application/vnd.oci.image.index.v1+json"
TOKEN = "anonymous-pull-token"


class FakeRegistry:
    def __init__(self) -> None:
        self.manifests: dict[tuple[str, str], bytes] = {}
        self.requests: list[tuple[str, str, dict]] = []
        self.digest_header = True
        self.redirect_to: str | None = None
        self.anonymous = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def add(self, name: str, tag: str) -> str:
        """Publish an image index for ``name:tag``; its digest."""
        body = json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": [], "tag": tag}).encode()
        self.manifests[(name, tag)] = body
        return "sha256:" + hashlib.sha256(body).hexdigest()

    def __enter__(self) -> "FakeRegistry":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _manifest(self, head: bool) -> None:
                registry.requests.append((self.command, self.path, dict(self.headers)))
                url = urlparse(self.path)
                if url.path == "/token":
                    body = json.dumps({"token": TOKEN, "query": parse_qs(url.query)}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                parts = url.path.split("/manifests/")
                name = parts[0][len("/v2/"):] if len(parts) == 2 else ""
                if self.headers.get("Authorization") != f"Bearer {TOKEN}" and not registry.anonymous:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", f'Bearer realm="{registry.url}/token",service="fake",'
                                                          f'scope="repository:{name}:pull"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if registry.redirect_to:
                    self.send_response(307)
                    self.send_header("Location", registry.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = registry.manifests.get((name, parts[1] if len(parts) == 2 else ""))
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", INDEX)
                self.send_header("Content-Length", str(len(body)))
                if registry.digest_header:
                    self.send_header("Docker-Content-Digest", "sha256:" + hashlib.sha256(body).hexdigest())
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
                self._manifest(True)

            def do_GET(self) -> None:  # noqa: N802
                self._manifest(False)

        return Handler
