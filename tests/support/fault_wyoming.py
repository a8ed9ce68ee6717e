"""A loopback Wyoming server on real sockets answering each request with a scripted, maybe broken, reply.

``describe`` is answered with an info naming one ASR and one TTS program (no streaming unless asked).
When a request is complete (``synthesize`` or ``audio-stop``; with ``early=True`` at the first audio
chunk), ``script(peer)`` runs: it can send good frames, raw bytes, or nothing at all.

Run as a process (``python -m tests.support.fault_wyoming MODE PORT``) it serves one of ``MODES`` and
prints ``armed`` once it has started an answer it will never finish, so a test can kill it right then.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from typing import BinaryIO

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, read_event, write_event
from wyoming.info import AsrModel, AsrProgram, Attribution, Info, TtsProgram, TtsVoice

from tests.support.loopback_server import LoopbackServer
from voice.audio.block import ENGINE_RATE, AudioBlock

_WHO = Attribution(name="tests", url="http://127.0.0.1")


def info(streaming: bool = False) -> Info:
    asr = AsrProgram(
        name="fault-asr",
        attribution=_WHO,
        installed=True,
        description=None,
        version=None,
        models=[
            AsrModel(
                name="m", attribution=_WHO, installed=True, description=None, version=None, languages=["en"]
            )
        ],
    )
    tts = TtsProgram(
        name="fault-tts",
        attribution=_WHO,
        installed=True,
        description=None,
        version=None,
        voices=[
            TtsVoice(
                name="v", attribution=_WHO, installed=True, description=None, version=None, languages=["en"]
            )
        ],
        supports_synthesize_streaming=streaming,
    )
    return Info(asr=[asr], tts=[tts])


class Peer:
    """The server's side of one connection, handed to the script."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.writer: BinaryIO = conn.makefile("wb")

    def send(self, event: Event) -> None:
        write_event(event, self.writer)

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()

    def wait_for_close(self, timeout: float = 5.0) -> None:
        """Say nothing until the client hangs up (or ``timeout`` passes)."""
        self.conn.settimeout(timeout)
        try:
            while self.conn.recv(65_536):
                pass
        except TimeoutError:
            pass

    def audio(self, seconds: float, rate: int = 22050, width: int = 2) -> None:
        """A well-formed audio stream of a quiet tone, ``seconds`` long."""
        self.send(AudioStart(rate=rate, width=width, channels=1).event())
        self.chunk(seconds, rate, width)
        self.send(AudioStop().event())

    def chunk(self, seconds: float, rate: int = 22050, width: int = 2) -> None:
        frames = int(seconds * rate)
        tone = bytes([0x00, 0x10] * frames)[: frames * width]
        self.send(AudioChunk(rate=rate, width=width, channels=1, audio=tone).event())


Script = Callable[[Peer], None]


class FaultWyoming(LoopbackServer):
    """Serve ``script`` to every request on 127.0.0.1 until closed."""

    def __init__(
        self, script: Script, *, streaming: bool = False, early: bool = False, port: int = 0
    ) -> None:
        self.script = script
        self.received: list[Event] = []  # the events of the last request, describe excepted
        self._info = info(streaming)
        self._streaming = streaming
        self._early = early
        super().__init__(port)  # serving starts here, with the state above in place
        self.url = f"wyoming://127.0.0.1:{self.port}"

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            peer = Peer(conn)
            try:
                while (event := read_event(reader)) is not None:
                    if event.type == "describe":
                        peer.send(self._info.event())
                        continue
                    if event.type in ("transcribe", "synthesize-start") or (
                        event.type == "synthesize" and not self._streaming
                    ):
                        self.received = []
                    self.received.append(event)
                    if event.type == "synthesize" and self._streaming:
                        continue  # sent for compatibility; the stream ends at synthesize-stop
                    if event.type in ("synthesize", "synthesize-stop", "audio-stop") or (
                        self._early and event.type == "audio-chunk"
                    ):
                        self.script(peer)
                        return
            except OSError:
                pass  # the client went away mid-script, which many tests do on purpose


def _armed() -> None:
    print("armed", flush=True)
    time.sleep(3600)


def _half_audio(peer: Peer) -> None:
    peer.send(AudioStart(rate=22050, width=2, channels=1).event())
    peer.chunk(0.2)
    _armed()


MODES: dict[str, tuple[Script, bool]] = {
    "tts-half": (_half_audio, False),  # killed in the middle of the audio it is sending
    "asr-listening": (lambda peer: _armed(), True),  # killed while the utterance is still coming in
}


if __name__ == "__main__":
    script, early = MODES[sys.argv[1]]
    with FaultWyoming(script, early=early, port=int(sys.argv[2])):
        print("listening", flush=True)
        time.sleep(3600)


UTTERANCE = AudioBlock(np.full(ENGINE_RATE, 0.05, dtype=np.float32), ENGINE_RATE)


def audio_then_silent(peer: Peer) -> None:
    peer.send(AudioStart(rate=22050, width=2, channels=1).event())
    peer.chunk(0.1)
    peer.wait_for_close()
