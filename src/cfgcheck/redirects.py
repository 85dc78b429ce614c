"""Redirects for the HTTP clients that send a credential (the Hub lookup's ``HF_TOKEN``, a registry's
anonymous pull token): the credential is for the origin that issued it (or the challenge that asked
for it), so a redirect to another origin (scheme, host or port) is followed without ``Authorization``.
urllib's own handler copies every header a request was made with to the redirected request
(``urllib.request.HTTPRedirectHandler.redirect_request``), whatever the host.
"""

from __future__ import annotations

import urllib.parse
import urllib.request


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class SameOriginRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects; ``Authorization`` goes only to the origin it was meant for."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 - urllib's hook
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            new.headers.pop("Authorization", None)
            new.unredirected_hdrs.pop("Authorization", None)
        return new


def opener() -> urllib.request.OpenerDirector:
    """An opener whose redirects keep credentials on their origin."""
    return urllib.request.build_opener(SameOriginRedirect())
