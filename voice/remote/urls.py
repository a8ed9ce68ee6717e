"""Speech server URLs: ``wyoming://HOST:PORT`` or ``http(s)://HOST/v1``, the query saying what to use.

Read without importing any backend, so the config can check a URL as cheaply as any other value.
"""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qsl, urlsplit

from voice.errors import ConfigError

FORMS = "wyoming://HOST:PORT or http(s)://HOST/v1"
# What each kind of server can be told in the query, by role.
OPTIONS = {
    ("ASR", "wyoming"): frozenset({"model", "language"}),
    ("ASR", "http"): frozenset({"model", "language"}),
    ("TTS", "wyoming"): frozenset({"voice"}),
    ("TTS", "http"): frozenset({"model", "voice", "rate"}),
}


def is_server_url(spec: str | None) -> bool:
    """True if a speech setting names a server rather than a local model."""
    return spec is not None and "://" in spec


def parse_server_url(role: str, url: str) -> tuple[SplitResult, dict[str, str]]:
    """The URL's parts (its scheme lower-cased) and its query's options; a ConfigError if unusable."""
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise ConfigError(f"{role} server URL is not a URL ({exc}); use {FORMS}") from exc
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{role} server URL {shown(parts)} has a bad port ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme == "wyoming":
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ConfigError(f"{role} server URL {shown(parts)} must be wyoming://HOST:PORT")
    elif scheme in ("http", "https"):
        if not parts.hostname or parts.path.strip("/") == "":
            raise ConfigError(
                f"{role} server URL {shown(parts)} must name the API's base, e.g. http://HOST/v1"
            )
    else:
        raise ConfigError(f"{role} server URL {shown(parts)} is not one of {FORMS}")
    allowed = OPTIONS[role, "wyoming" if scheme == "wyoming" else "http"]
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise ConfigError(f"{role} server URL {shown(parts)}: unknown option {unknown[0]!r}, known: {known}")
    if (
        role == "TTS"
        and "rate" in options
        and not (options["rate"].isdigit() and 0 < int(options["rate"]) <= 192_000)
    ):
        raise ConfigError(
            f"TTS server URL {shown(parts)}: rate must be a sample rate in Hz, got {options['rate']!r}"
        )
    return parts._replace(scheme=scheme), options


def shown(parts: SplitResult) -> str:
    """The URL as shown in a message: no credentials, no query."""
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
