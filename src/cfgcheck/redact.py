"""One redaction pass for everything cfgcheck sends to GitHub or prints while talking to it.

``redact(text, secrets)`` removes, in this order:

1. each given secret's exact value, also stripped of surrounding whitespace (a token read from a file
   often ends in a newline), Markdown-escaped as a comment body carries it, and the base64 forms a
   git ``extraheader`` carries it in (``x-access-token:<token>``, as actions/checkout writes it);
2. the values of environment variables whose names say they hold a secret (``*TOKEN*``, ``*SECRET*``,
   ``*PASSWORD*``, ``*_KEY``...: ``secret_names``): a secret the workflow passed to the job must not reach a comment;
3. GitHub tokens by shape: ``ghp_ gho_ ghu_ ghs_ ghr_`` and ``github_pat_`` (GitHub's formats,
   https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/), and 40-hex
   classic tokens where something names them a credential (``token=``, ``Bearer``, ``password:``);
   a bare 40-hex string is a commit id far more often, and commit links must survive;
4. ``Authorization:`` header values and git ``extraheader`` values (``AUTHORIZATION: basic <base64>``),
   ``Bearer``/``Basic`` credentials;
5. URL credentials (``https://user:pass@host``) and URL query strings (``?access_token=...``).

Every pattern is linear: no nested quantifiers, so hostile text cannot make redaction slow.
"""

from __future__ import annotations

import base64
import os
import re
from functools import lru_cache
from typing import Iterable
from .reporters.markdown import escape
from .secret_names import secret_name

MASK = "***"
MIN_SECRET = 8  # shorter "secrets" would mask ordinary words everywhere

# an optional backslash before "_": a token in Markdown-escaped text (ghs\_...) still matches
_PREFIXED = re.compile(r"\b(?:gh[pousr]\\?_[A-Za-z0-9]{20,}|github\\?_pat\\?_(?:[A-Za-z0-9]|\\?_){20,})")
# "(?<![a-z0-9])", not "\b": GH_TOKEN=<hex> names it too ("_" is a word character)
_NAMED_HEX = re.compile(r"(?i)(?<![a-z0-9])(token|bearer|basic|password|passwd|secret|pat|credentials?|auth)"
                        r"([\"']?\s{0,3}[:=]?\s{0,3}[\"']?)[0-9a-f]{40}\b")
_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization\s{0,3}[:=]\s{0,3}|extraheader\s{0,3}=?\s{0,3})[^\r\n\"',]+")
_SCHEME = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9+/=._~-]{16,}")
# "\u200b?": the Markdown escape breaks "://" with a zero-width space so that GitHub does not autolink
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30}:\u200b?//)[^/@\s]{1,512}@")
# the query part is optional so that every URL is consumed by one match: no rescans, linear time
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30}:\u200b?//[^\s?#<>\"'`]*)(\?[^\s#<>\"'`]*)?")
def environment_secrets(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """Values of variables whose names say they are secrets (GITHUB_TOKEN, HF_TOKEN, AWS_SECRET_ACCESS_KEY)."""
    environ = os.environ if environ is None else environ
    return tuple(value for name, value in environ.items() if secret_name(name) and len(value.strip()) >= MIN_SECRET)


@lru_cache(maxsize=256)
def _forms(secret: str) -> frozenset[str]:
    """The exact value, its stripped form, the forms a Markdown body carries it in (escaped by
    ``reporters.markdown.escape``) and the base64 forms of a git extraheader."""

    forms = set()
    for value in {secret, secret.strip()}:
        if len(value.strip()) < MIN_SECRET:
            continue
        forms |= {value, escape(value).strip()}
        for userinfo in (f"x-access-token:{value}", f"{value}:x-oauth-basic", f":{value}", value):
            encoded = base64.b64encode(userinfo.encode("utf-8")).decode("ascii")
            forms |= {encoded, encoded.rstrip("=")}
    return frozenset(forms)


def redact(text: str, secrets: str | Iterable[str | None] | None = ()) -> str:
    """``text`` without credentials: the given secrets, secret environment values, tokens, auth headers,
    URL credentials and query strings. ``secrets`` may be one value or several (None entries are skipped)."""
    text = str(text)
    if isinstance(secrets, str):
        secrets = (secrets,)
    values: set[str] = set()
    for secret in (*(secrets or ()), *environment_secrets()):
        if secret:
            values |= _forms(secret)
    for value in sorted(values, key=len, reverse=True):  # longest first: no partial leftovers
        text = text.replace(value, MASK)
    text = _PREFIXED.sub(MASK, text)
    text = _NAMED_HEX.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    text = _HEADER.sub(lambda m: m.group(1) + MASK, text)
    text = _SCHEME.sub(lambda m: m.group(1) + " " + MASK, text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    return _URL.sub(lambda m: m.group(1) + ("?" + MASK if m.group(2) else ""), text)
