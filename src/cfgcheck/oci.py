"""A minimal OCI distribution client: the digest a registry serves for ``repository:tag``.

``HEAD /v2/<name>/manifests/<tag>`` with an ``Accept`` header that asks for the multi-platform forms
first (OCI image index, Docker manifest list) and then single manifests, as ``docker pull`` does, so
the digest is the one a ``tag@sha256:`` reference pins for every platform. The digest is the
``Docker-Content-Digest`` header; a registry that does not send it on HEAD is asked with GET and the
digest is computed from the manifest bytes (the distribution spec's definition). A ``401`` with a
``WWW-Authenticate: Bearer realm=...,service=...`` challenge gets an anonymous pull token (Docker Hub,
ghcr.io, quay.io) and the request is repeated once. Nothing else is sent: no credentials are read.

Docker Hub's API host is ``registry-1.docker.io`` and its official images live under ``library/``.
Plain HTTP is used only for ``localhost`` / ``127.0.0.1`` registries (as Docker treats them), or for
an endpoint given explicitly (tests run a fake registry on 127.0.0.1).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from . import redirects

ACCEPT = ", ".join((
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
))
DOCKER_HUB = "registry-1.docker.io"
MAX_BODY = 4 * 1024 * 1024  # a manifest or token response larger than this is refused
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')
_NAME = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


class RegistryError(Exception):
    """The digest could not be resolved; one line saying why."""


@dataclass
class Registry:
    """Where registries are reached: ``endpoints`` maps a registry host (``docker.io``, ``ghcr.io``) to a
    base URL, for mirrors and tests; ``timeout`` bounds each request."""

    endpoints: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0

    def base_url(self, registry: str | None) -> str:
        host = registry or "docker.io"
        if host in self.endpoints:
            return self.endpoints[host].rstrip("/")
        if host == "docker.io":
            return f"https://{DOCKER_HUB}"
        scheme = "http" if host.split(":", 1)[0] in ("localhost", "127.0.0.1") else "https"
        return f"{scheme}://{host}"

    def digest(self, registry: str | None, repository: str, tag: str) -> str:
        """The digest ``registry/repository:tag`` resolves to (``sha256:...``)."""
        name = repository if registry or "/" in repository else f"library/{repository}"
        if not _NAME.match(name) or not _TAG.match(tag):
            raise RegistryError(f"not a valid image reference: {repository}:{tag}")
        url = f"{self.base_url(registry)}/v2/{name}/manifests/{urllib.parse.quote(tag)}"
        token = None
        for _ in range(2):
            try:
                return self._manifest_digest(url, token)
            except urllib.error.HTTPError as exc:
                if exc.code != 401 or token is not None:
                    raise RegistryError(f"{url}: HTTP {exc.code}") from None
                token = self._anonymous_token(exc.headers.get("WWW-Authenticate", ""), name)
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise RegistryError(f"cannot reach {self.base_url(registry)}: {reason}") from None
        raise RegistryError(f"{url}: refused after authentication")

    def _open(self, request: urllib.request.Request):
        # the pull token is the challenging registry's: a redirect elsewhere (a CDN) goes without it
        return redirects.opener().open(request, timeout=self.timeout)

    def _manifest_digest(self, url: str, token: str | None) -> str:
        headers = {"Accept": ACCEPT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        with self._open(urllib.request.Request(url, headers=headers, method="HEAD")) as response:
            found = response.headers.get("Docker-Content-Digest")
        if not found:
            with self._open(urllib.request.Request(url, headers=headers)) as response:
                body = response.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise RegistryError(f"{url}: manifest larger than {MAX_BODY} bytes")
            found = "sha256:" + hashlib.sha256(body).hexdigest()
        found = found.strip()
        if not DIGEST.match(found):
            raise RegistryError(f"{url}: the registry answered an unusable digest")
        return found

    def _anonymous_token(self, challenge: str, name: str) -> str:
        scheme, _, params = challenge.partition(" ")
        fields = dict(_CHALLENGE.findall(params))
        realm = fields.get("realm", "")
        if scheme.lower() != "bearer" or not realm.startswith(("https://", "http://")):
            raise RegistryError("the registry asks for credentials (no anonymous pull token offered)")
        query = {"scope": fields.get("scope") or f"repository:{name}:pull"}
        if fields.get("service"):
            query["service"] = fields["service"]
        url = realm + ("&" if "?" in realm else "?") + urllib.parse.urlencode(query)
        try:
            with self._open(urllib.request.Request(url)) as response:
                body = response.read(MAX_BODY + 1)
            data = json.loads(body[:MAX_BODY])
        except (urllib.error.URLError, OSError, ValueError, RecursionError) as exc:
            raise RegistryError(f"no anonymous pull token from {realm}: {getattr(exc, 'reason', exc)}") from None
        token = data.get("token") or data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise RegistryError(f"no anonymous pull token from {realm}")
        return token
