"""A speech server's URL made into a backend of the ASR or TTS port.

``wyoming://HOST:PORT`` is a Wyoming server; ``http(s)://HOST[:PORT]/v1`` an OpenAI-compatible one. The
query names what the server serves: ``model`` and ``language`` for ASR, ``voice`` (and for OpenAI
``model`` and the PCM ``rate``) for TTS, e.g. ``http://box:8000/v1?model=tts-1&voice=alloy``. Nothing
connects until the first call, so a server that is down now can be up by the time it is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult

from voice.asr.openai_asr import OpenAITranscriber
from voice.asr.wyoming_asr import WyomingTranscriber
from voice.remote.errors import CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S
from voice.remote.http_audio import AudioEndpoint
from voice.remote.urls import parse_server_url
from voice.remote.wyoming_link import WyomingLink
from voice.tts.openai_tts import PCM_RATE, OpenAISynthesizer
from voice.tts.wyoming_tts import WyomingSynthesizer

RemoteTranscriber = WyomingTranscriber | OpenAITranscriber
RemoteSynthesizer = WyomingSynthesizer | OpenAISynthesizer


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
    parts, options = parse_server_url("ASR", url)
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
    parts, options = parse_server_url("TTS", url)
    if parts.scheme == "wyoming":
        return WyomingSynthesizer(_link("TTS", parts, limits), voice=options.get("voice"))
    endpoint = _endpoint("TTS", parts, "/audio/speech", api_key, limits)
    rate = int(options.get("rate", PCM_RATE))
    return OpenAISynthesizer(
        endpoint, model=options.get("model", "tts-1"), voice=options.get("voice", "alloy"), rate=rate
    )


def _link(role: str, parts: SplitResult, limits: Limits) -> WyomingLink:
    assert parts.hostname is not None  # both checked by parse_server_url
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
