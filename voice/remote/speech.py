"""A speech server's URL made into a backend of the ASR or TTS port.

``wyoming://HOST:PORT`` is a Wyoming server; ``http(s)://HOST[:PORT]/v1`` an OpenAI-compatible one. The
query names what the server serves: ``model`` and ``language`` for ASR, ``voice`` (and for OpenAI
``model`` and the PCM ``rate``) for TTS, e.g. ``http://box:8000/v1?model=tts-1&voice=alloy``. Nothing
connects until the first call, so a server that is down now can be up by the time it is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, urlsplit

from voice.asr.openai_asr import OpenAITranscriber
from voice.asr.wyoming_asr import WyomingTranscriber
from voice.errors import ConfigError
from voice.remote.errors import CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S
from voice.remote.http_audio import AudioEndpoint
from voice.remote.wyoming_link import WyomingLink
from voice.tts.openai_tts import PCM_RATE, OpenAISynthesizer
from voice.tts.wyoming_tts import WyomingSynthesizer

_FORMS = "wyoming://HOST:PORT or http(s)://HOST/v1"
_ASR_KEYS = frozenset({"model", "language"})
_TTS_KEYS = {"wyoming": frozenset({"voice"}), "http": frozenset({"model", "voice", "rate"})}


RemoteTranscriber = WyomingTranscriber | OpenAITranscriber
RemoteSynthesizer = WyomingSynthesizer | OpenAISynthesizer


def is_server_url(spec: str | None) -> bool:
    """True if an ``--asr``/``--tts`` value names a server rather than a local model."""
    return spec is not None and "://" in spec


@dataclass(frozen=True)
class Limits:
    """How long to wait for a speech server: to connect, and between any two reads."""

    connect_timeout_s: float = CONNECT_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S


def transcriber_for(
    url: str, *, api_key: str | None = None, limits: Limits | None = None
) -> RemoteTranscriber:
    """The remote transcriber ``url`` names; a ConfigError (one line) if it names none."""
    limits = limits or Limits()
    parts, options = _parse("ASR", url, _ASR_KEYS, _ASR_KEYS)
    if parts.scheme == "wyoming":
        link = _link("ASR", parts, limits)
        return WyomingTranscriber(link, model=options.get("model"), language=options.get("language"))
    endpoint = _endpoint("ASR", parts, "/audio/transcriptions", api_key, limits)
    return OpenAITranscriber(
        endpoint, model=options.get("model", "whisper-1"), language=options.get("language")
    )


def synthesizer_for(
    url: str, *, api_key: str | None = None, limits: Limits | None = None
) -> RemoteSynthesizer:
    """The remote synthesizer ``url`` names; a ConfigError (one line) if it names none."""
    limits = limits or Limits()
    parts, options = _parse("TTS", url, _TTS_KEYS["wyoming"], _TTS_KEYS["http"])
    if parts.scheme == "wyoming":
        return WyomingSynthesizer(_link("TTS", parts, limits), voice=options.get("voice"))
    endpoint = _endpoint("TTS", parts, "/audio/speech", api_key, limits)
    rate = options.get("rate", str(PCM_RATE))
    if not rate.isdigit() or not 0 < int(rate) <= 192_000:
        raise ConfigError(f"TTS server URL {_shown(parts)}: rate must be a sample rate in Hz, got {rate!r}")
    return OpenAISynthesizer(
        endpoint, model=options.get("model", "tts-1"), voice=options.get("voice", "alloy"), rate=int(rate)
    )


def _parse(
    role: str, url: str, wyoming_keys: frozenset[str], http_keys: frozenset[str]
) -> tuple[SplitResult, dict[str, str]]:
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise ConfigError(f"{role} server URL is not a URL ({exc}); use {_FORMS}") from exc
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{role} server URL {_shown(parts)} has a bad port ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme == "wyoming":
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ConfigError(f"{role} server URL {_shown(parts)} must be wyoming://HOST:PORT")
        allowed = wyoming_keys
    elif scheme in ("http", "https"):
        if not parts.hostname or parts.path.strip("/") == "":
            raise ConfigError(
                f"{role} server URL {_shown(parts)} must name the API's base, e.g. http://HOST/v1"
            )
        allowed = http_keys
    else:
        raise ConfigError(f"{role} server URL {_shown(parts)} is not one of {_FORMS}")
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise ConfigError(f"{role} server URL {_shown(parts)}: unknown option {unknown[0]!r}, known: {known}")
    return parts._replace(scheme=scheme), options


def _link(role: str, parts: SplitResult, limits: Limits) -> WyomingLink:
    assert parts.hostname is not None  # both checked by _parse
    assert parts.port is not None
    return WyomingLink(
        role,
        parts.hostname,
        parts.port,
        connect_timeout_s=limits.connect_timeout_s,
        idle_timeout_s=limits.idle_timeout_s,
    )


def _endpoint(role: str, parts: SplitResult, path: str, api_key: str | None, limits: Limits) -> AudioEndpoint:
    base = parts._replace(query="", fragment="").geturl()
    return AudioEndpoint(
        role,
        base,
        path,
        api_key=api_key,
        connect_timeout_s=limits.connect_timeout_s,
        idle_timeout_s=limits.idle_timeout_s,
    )


def _shown(parts: SplitResult) -> str:
    """The URL as shown in a message: no credentials, no query."""
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
