"""Asking the servers the assistant depends on whether they answer: the LLM, and remote speech servers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import httpx

from voice.config.settings import Settings
from voice.llm.embedded_chat import EmbeddedChatModel
from voice.llm.port import ChatModel

PROBE_TIMEOUT_S = 2.0
PROBE_EVERY_S = 2.0  # a scrape storm asks a server at most this often


class Probe:
    """Asks a server whether it answers, remembering the answer for ``PROBE_EVERY_S``."""

    def __init__(self, ask: Callable[[], str]) -> None:
        self._ask = ask
        self._lock = threading.Lock()
        self._answer: tuple[float, str] | None = None

    def answer(self) -> str:
        with self._lock:
            now = time.monotonic()
            if self._answer is None or now - self._answer[0] >= PROBE_EVERY_S:
                self._answer = (now, self._ask())
            return self._answer[1]


def llm_probe(base_url: Callable[[], str], headers: Mapping[str, str] | None = None) -> Probe:
    """``GET {base}/models`` answering 200, as llama.cpp's and every OpenAI-compatible server does."""

    def ask() -> str:
        url = f"{base_url().rstrip('/')}/models"
        try:
            response = httpx.get(url, headers=dict(headers or {}), timeout=PROBE_TIMEOUT_S, trust_env=False)
        except httpx.HTTPError as exc:
            return f"{url} does not answer ({type(exc).__name__})"
        return "ok" if response.status_code == 200 else f"{url} answered {response.status_code}"

    return Probe(ask)


def server_probe(url: str) -> Probe:
    """A speech server (``wyoming://`` or ``http(s)://``) accepting a TCP connection."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)

    def ask() -> str:
        try:
            socket.create_connection((host, port), PROBE_TIMEOUT_S).close()
        except OSError as exc:
            return f"{host}:{port} does not accept connections ({exc.strerror or type(exc).__name__})"
        return "ok"

    return Probe(ask)


def probes_for(settings: Settings, model: ChatModel) -> tuple[Probe, Probe | None, Probe | None]:
    """The LLM's probe (the embedded server's current address, or the configured URL) and the remote
    speech servers' (None for whisper and piper in this process: their failures are events)."""
    if isinstance(model, EmbeddedChatModel):
        embedded = model
        llm = llm_probe(lambda: embedded.base_url)
    else:
        url = settings.llm.url or ""
        headers = dict(settings.llm.extra_headers)
        if settings.llm.api_key:
            headers["Authorization"] = f"Bearer {settings.llm.api_key}"
        llm = llm_probe(lambda: url, headers)
    asr = server_probe(settings.asr_url) if settings.asr_url else None
    tts = server_probe(settings.tts_url) if settings.tts_url else None
    return llm, asr, tts
