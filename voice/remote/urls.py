"""Speech server URLs, read without importing any backend, so the config can check one cheaply.

Which schemes there are, and what each server's query may say, is the table of speech backends'
(voice/speech_backends.py); this reads a URL into its parts and checks the two shapes servers come in.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, urlsplit

from voice.errors import ConfigError


@dataclass(frozen=True)
class ServerUrl:
    """A speech server's URL in parts: ``base`` is it without query or credentials' display."""

    role: str  # "ASR" or "TTS", for messages
    scheme: str  # lower-cased
    host: str
    port: int | None
    path: str
    options: dict[str, str]  # the query
    base: str  # scheme://[user@]host[:port]/path, what a client connects to
    shown: str  # as a message shows it: no credentials, no query


def is_server_url(spec: str | None) -> bool:
    """True if a speech setting names a server rather than a local model."""
    return spec is not None and "://" in spec


def split_server_url(role: str, url: str) -> ServerUrl:
    """The URL's parts and its query's options; a ConfigError if it is not a URL at all."""
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise ConfigError(f"{role} server URL is not a URL ({exc})") from exc
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{role} server URL {shown(parts)} has a bad port ({exc})") from exc
    scheme = parts.scheme.lower()
    return ServerUrl(
        role,
        scheme,
        parts.hostname or "",
        port,
        parts.path,
        dict(parse_qsl(parts.query, keep_blank_values=True)),
        parts._replace(scheme=scheme, query="", fragment="").geturl(),
        shown(parts._replace(scheme=scheme)),
    )


def host_and_port(url: ServerUrl, form: str) -> None:
    """A server reached at HOST:PORT and nothing more (Wyoming)."""
    if not url.host or url.port is None or url.path not in ("", "/"):
        raise ConfigError(f"{url.role} server URL {url.shown} must be {form}")


def api_base(url: ServerUrl, form: str) -> None:
    """A server reached at an API's base path (``form``: http(s)://HOST/v1)."""
    if not url.host or url.path.strip("/") == "":
        example = f"{url.scheme}://HOST/v1"
        raise ConfigError(f"{url.role} server URL {url.shown} must name the API's base, e.g. {example}")


def shown(parts: SplitResult) -> str:
    """The URL as shown in a message: no credentials, no query."""
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
