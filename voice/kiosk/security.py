"""Who may connect: loopback by default, a token for any other bind, and the page's own origin.

The token is compared in constant time and never repeated back: not in responses, events or logs.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

from voice.config.kiosk import TOKEN_ENV
from voice.errors import ConfigError


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``: a bind no other machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse (ConfigError) to listen beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"listening on {host} reaches other machines: set {TOKEN_ENV} to require a token")


def token_ok(expected: str | None, path: str, authorization: str | None) -> bool:
    """The upgrade carries the token as ``Authorization: Bearer ...`` or ``?token=...`` (browsers)."""
    if not expected:
        return True
    offered = []
    if authorization and authorization.startswith("Bearer "):
        offered.append(authorization.removeprefix("Bearer ").strip())
    offered += parse_qs(urlsplit(path).query).get("token", [])
    return any(hmac.compare_digest(given.encode(), expected.encode()) for given in offered)


def origin_ok(origin: str | None, host: str | None, allowed: Iterable[str]) -> bool:
    """No Origin: not a browser, allowed. A browser must come from the page itself or an allowed origin."""
    if origin is None:
        return True
    if host is not None and origin in (f"http://{host}", f"https://{host}"):
        return True
    return origin.rstrip("/") in {item.rstrip("/") for item in allowed}
