"""A Wyoming wake word server (wyoming-openwakeword, wyoming-microwakeword): one long connection that
takes the mic's audio as it comes (``detect``, ``audio-start``, ``audio-chunk``...) and answers with a
``detection`` whenever it hears its word. ``wyoming://HOST:PORT?name=MODEL`` asks for one model."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import deque

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.wake import Detect, Detection

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.errors import ConfigError
from voice.remote.errors import SpeechServerError
from voice.remote.urls import host_and_port, split_server_url
from voice.remote.wyoming_link import WyomingConnection, WyomingLink
from voice.wake.port import REFRACTORY_S, WakeDetection

FORM = "wyoming://HOST:PORT (or wyoming://HOST:PORT?name=MODEL)"
RETRY_S = 2.0  # a lost server is tried again this often, while the mic goes on
SENT_KEPT = 500  # chunks whose end is remembered (20 s of 40 ms blocks): a detection names one of them


def check_wyoming_wake_url(url: str) -> None:
    """ConfigError unless ``url`` is a Wyoming wake server's address."""
    parts = split_server_url("wake word", url)
    host_and_port(parts, FORM)
    if set(parts.options) - {"name"}:
        raise ConfigError(f"wake word server URL {parts.shown} may only say ?name=MODEL")


class WyomingWakeDetector:
    """The mic streamed to a Wyoming wake server; its detections come back on a reader thread."""

    def __init__(self, url: str) -> None:
        check_wyoming_wake_url(url)
        parts = split_server_url("wake word", url)
        assert parts.port is not None
        self._link = WyomingLink("wake word", parts.host, parts.port, idle_timeout_s=None)
        wanted = parts.options.get("name")
        self.name = wanted or "wyoming"
        self.phrase = (wanted or "").replace("_", " ").title()  # the model's words, as near as a name says
        self._names = [wanted] if wanted else None
        self.problem: str | None = None
        # (the connection it came on, a detection or why that connection ended)
        self._found: queue.Queue[tuple[WyomingConnection, Detection | str]] = queue.Queue()
        self._sent: deque[tuple[int, int]] = deque(maxlen=SENT_KEPT)  # (timestamp ms, end sample)
        self._quiet_until = 0
        self._connection: WyomingConnection | None = None
        self._reader: threading.Thread | None = None
        self._ending = CancelToken()  # cancelled, it shuts the connection's socket: the reader wakes
        self._tried_at = 0.0
        try:
            self._connect()
        except SpeechServerError as exc:
            raise ConfigError(f"wake word server: {exc.detail}") from exc

    def _connect(self) -> None:
        self._tried_at = time.monotonic()
        self._ending = CancelToken()
        connection = self._link.connect(self._ending)
        try:
            connection.send(Detect(names=self._names).event())
            connection.send(AudioStart(rate=ENGINE_RATE, width=2, channels=1, timestamp=0).event())
        except SpeechServerError:
            connection.close()
            raise
        self._connection = connection
        self._reader = threading.Thread(
            target=self._read, args=(connection,), name="wyoming-wake", daemon=True
        )
        self._reader.start()

    def _read(self, connection: WyomingConnection) -> None:
        """Detections into the queue until the connection ends; then why, as a line."""
        try:
            while True:
                event = connection.receive()
                if Detection.is_type(event.type):
                    self._found.put((connection, Detection.from_event(event)))
        except SpeechServerError as exc:
            self._found.put((connection, exc.detail))

    def hear(self, block: AudioBlock) -> WakeDetection | None:
        self._send(block)
        found: WakeDetection | None = None
        while True:
            try:
                came_on, item = self._found.get_nowait()
            except queue.Empty:
                return found
            if came_on is not self._connection:
                continue  # from a connection already given up
            if isinstance(item, str):
                self._lost(item)
                continue
            sample = self._sample_of(item.timestamp, block.end)
            if found is None and sample >= self._quiet_until:
                self.name = item.name or self.name
                found = WakeDetection(self.name, sample)
                self._quiet_until = sample + round(REFRACTORY_S * ENGINE_RATE)

    def _send(self, block: AudioBlock) -> None:
        if self._connection is None:
            if time.monotonic() - self._tried_at < RETRY_S:
                return
            try:
                self._connect()
            except SpeechServerError as exc:
                self.problem = f"the wake word server is unreachable, trying again: {exc.detail}"
                return
        pcm = np.clip(block.samples * 32768.0, -32768, 32767).astype("<i2").tobytes()
        stamp = block.start * 1000 // ENGINE_RATE
        self._sent.append((stamp, block.end))
        chunk = AudioChunk(rate=ENGINE_RATE, width=2, channels=1, audio=pcm, timestamp=stamp)
        connection = self._connection
        assert connection is not None
        try:
            connection.send(chunk.event())
        except SpeechServerError as exc:
            self._lost(exc.detail)

    def _lost(self, why: str) -> None:
        if self._connection is not None:
            self._end_connection()
            self.problem = f"lost the wake word server, trying again: {why}"

    def _end_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        self._ending.cancel("the wake word stream ended")
        if self._reader is not None:
            self._reader.join(timeout=2.0)
        connection.close()

    def _sample_of(self, timestamp: int | None, fallback: int) -> int:
        """The end of the chunk the server names by its timestamp (the newest sent if it names none)."""
        for stamp, end in reversed(self._sent):
            if stamp == timestamp:
                return end
        return fallback

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(SpeechServerError):  # closing anyway
                self._connection.send(AudioStop().event())
        self._end_connection()
