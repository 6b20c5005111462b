"""Safety of the labeling app: where it listens, the access token, cross-site requests.

- The server binds to ``127.0.0.1`` by default. Listening on any other address requires a
  token (:func:`resolve_token` generates one when none is given); once a token is set, every
  request must carry it: the ``pbassess_token`` cookie (set when the page is opened with
  ``?token=...``), an ``Authorization: Bearer ...`` header or a ``token`` query parameter.
- Every POST must carry the page's CSRF token in the ``X-Pbassess-CSRF`` header and a JSON
  body, and its ``Origin`` (when the browser sends one) must be the server itself: a form or
  script on another site can neither read the token nor send the header.
- Without a token the ``Host`` header must name the loopback address, so a page on another
  site cannot reach the server through DNS rebinding.

Examples
--------
>>> resolve_token("127.0.0.1", None)
>>> len(resolve_token("0.0.0.0", None)) >= 32
True
>>> is_loopback("localhost"), is_loopback("0.0.0.0")
(True, False)
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from urllib.parse import urlsplit

from pbassess.errors import ConfigError

__all__ = ["CSRF_HEADER", "TOKEN_COOKIE", "Guard", "is_loopback", "resolve_token"]

TOKEN_COOKIE = "pbassess_token"
CSRF_HEADER = "x-pbassess-csrf"
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address) is the loopback interface.

    Examples
    --------
    >>> is_loopback("127.0.0.2"), is_loopback("192.168.1.4")
    (True, False)
    """
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_token(host: str, token: str | None) -> str | None:
    """The token the server checks: the one given, a new random one off loopback, or None (loopback, none given).

    Examples
    --------
    >>> resolve_token("0.0.0.0", "abc")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: the token must have at least 16 characters (got 3); omit it to have one generated
    """
    if token is not None:
        if len(token) < 16:
            raise ConfigError(f"the token must have at least 16 characters (got {len(token)}); omit it to have one "
                              "generated")
        return token
    return None if is_loopback(host) else secrets.token_urlsafe(24)


class Guard:
    """The checks applied to every request (used by the app's middleware).

    Parameters
    ----------
    token : str, optional
        The access token (None: none required; then only loopback ``Host`` headers are served).
    csrf : str, optional
        The CSRF token embedded in the page (default: random).

    Examples
    --------
    >>> g = Guard(token="t" * 20, csrf="c" * 20)
    >>> g.token_ok({}, {}, {})
    False
    >>> g.token_ok({"authorization": "Bearer " + "t" * 20}, {}, {})
    True
    >>> g.post_problem({"x-pbassess-csrf": "c" * 20, "content-type": "application/json",
    ...                 "origin": "https://evil.example", "host": "127.0.0.1:8765"})
    'cross-site request refused (origin https://evil.example)'
    """

    def __init__(self, token: str | None = None, csrf: str | None = None) -> None:
        self.token = token
        self.csrf = csrf or secrets.token_urlsafe(24)

    def token_ok(self, headers, cookies, query) -> bool:
        """Whether a request carries the token (always True when none is required)."""
        if self.token is None:
            return True
        auth = headers.get("authorization", "")
        candidates = [cookies.get(TOKEN_COOKIE, ""), query.get("token", ""),
                      auth[7:] if auth.lower().startswith("bearer ") else ""]
        return any(c and hmac.compare_digest(c.encode(), self.token.encode()) for c in candidates)

    def host_ok(self, headers) -> bool:
        """Without a token, only a loopback ``Host`` header is served (no DNS rebinding)."""
        if self.token is not None:
            return True
        host = headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return is_loopback(name)

    def post_problem(self, headers) -> str | None:
        """Why a POST is refused (None when it is fine): CSRF header, JSON body, same origin."""
        sent = headers.get(CSRF_HEADER, "")
        if not sent or not hmac.compare_digest(sent.encode(), self.csrf.encode()):
            return "missing or wrong CSRF token (reload the page)"
        if not headers.get("content-type", "").split(";")[0].strip().lower() == "application/json":
            return "the body must be JSON"
        origin = headers.get("origin")
        if origin and origin != "null":
            if urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
                return f"cross-site request refused (origin {origin})"
        elif origin == "null":
            return "cross-site request refused (origin null)"
        return None
