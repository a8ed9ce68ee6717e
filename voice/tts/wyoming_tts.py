"""``WyomingSynthesizer``: the Synthesizer port over a Wyoming text-to-speech server (e.g. wyoming-piper).

One connection per chunk of text. A server that advertises ``supports_synthesize_streaming`` gets the
text as a stream (``synthesize-start``, ``synthesize-chunk``, ``synthesize``, ``synthesize-stop``) and
answers one ``audio-start``...``audio-stop`` per sentence, then ``synthesize-stopped``: the sentence
boundaries make the estimated word spans better. Otherwise one ``synthesize`` and one audio stream.
"""

from __future__ import annotations

import threading

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.resample import resample
from voice.cancel import CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.remote.pcm import WIDTH, from_pcm16
from voice.remote.urls import ServerUrl
from voice.remote.wyoming_link import WyomingConnection, WyomingLink
from voice.tts.port import Synthesis
from voice.tts.server_spans import estimated_synthesis, spoken_text


class WyomingSynthesizer:
    """Speaks with ``link``'s server in ``voice`` (a name from its info; None: the server's default)."""

    def __init__(self, link: WyomingLink, *, voice: str | None = None) -> None:
        self._link = link
        self._voice = SynthesizeVoice(name=voice) if voice else None
        self._lock = threading.Lock()
        self._streaming: bool | None = None  # asked once; asked again after a failure (maybe a new server)

    def __repr__(self) -> str:
        return f"WyomingSynthesizer({self._link.url!r})"

    def __enter__(self) -> WyomingSynthesizer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: every call opens and closes its own connection."""

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        spoken = spoken_text(text)
        if not spoken:
            return estimated_synthesis(text, [])
        try:
            streaming = self._supports_streaming(cancel)
            with self._link.connect(cancel) as connection:
                if streaming:
                    connection.send(SynthesizeStart(voice=self._voice).event())
                    connection.send(SynthesizeChunk(text=spoken).event())
                    connection.send(Synthesize(text=spoken, voice=self._voice).event())
                    connection.send(SynthesizeStop().event())
                else:
                    connection.send(Synthesize(text=spoken, voice=self._voice).event())
                segments = _segments(connection, streaming)
        except SpeechServerError as error:
            if error.code is not ErrorCode.CANCELLED:  # the server may have changed: ask it again
                with self._lock:
                    self._streaming = None
            raise
        return estimated_synthesis(text, segments)

    def _supports_streaming(self, cancel: CancelToken | None) -> bool:
        with self._lock:
            known = self._streaming
        if known is not None:
            return known
        info = self._link.describe(cancel)
        if not info.tts:
            raise self._link.fail(
                ErrorCode.UNSUPPORTED,
                Dispatch.REJECTED,
                f"{self._link.url} runs no text-to-speech program",
                retriable=False,
            )
        streaming = any(program.supports_synthesize_streaming for program in info.tts)
        with self._lock:
            self._streaming = streaming
        return streaming


def _segments(connection: WyomingConnection, streaming: bool) -> list[Samples]:
    """Each audio stream's samples at ENGINE_RATE, until the answer ends."""
    segments: list[Samples] = []
    pieces: list[bytes] | None = None
    rate = channels = 0
    while True:
        event = connection.receive()
        if AudioStart.is_type(event.type):
            rate, channels = _format(connection, event.data)
            pieces = []
        elif AudioChunk.is_type(event.type):
            if pieces is None:
                raise connection.malformed("an audio chunk before audio-start")
            if event.payload is None or _format(connection, event.data) != (rate, channels):
                raise connection.malformed("an audio chunk")
            pieces.append(event.payload)
        elif AudioStop.is_type(event.type):
            if pieces is not None:
                native = from_pcm16(b"".join(pieces), channels)
                segments.append(np.clip(resample(native, rate, ENGINE_RATE), -1.0, 1.0).astype(np.float32))
            pieces = None
            if not streaming:
                return segments
        elif SynthesizeStopped.is_type(event.type):
            return segments


def _format(connection: WyomingConnection, data: dict[str, object]) -> tuple[int, int]:
    rate, width, channels = data.get("rate"), data.get("width"), data.get("channels")
    if not (isinstance(rate, int) and 0 < rate <= 192_000):
        raise connection.malformed("an audio rate")
    if not (isinstance(channels, int) and 0 < channels <= 8):
        raise connection.malformed("an audio channel count")
    if width != WIDTH:
        raise connection.malformed(f"an audio sample width of {width} bytes (16-bit expected)")
    return rate, channels


def open_wyoming_synthesizer(url: ServerUrl, api_key: str | None, limits: Limits) -> WyomingSynthesizer:
    """The voice at a wyoming:// URL (``voice`` from its query; unset: the server's default)."""
    return WyomingSynthesizer(WyomingLink.to(url, limits), voice=url.options.get("voice"))
