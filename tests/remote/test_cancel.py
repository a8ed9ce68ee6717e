"""A remote call that is no longer wanted (the user cut in, the utterance was talked past) is left at once.

The cancel comes from another thread while the call is blocked on the server; the call raises CANCELLED
within CUT_S, the server sees the connection close, and the next call is served as usual.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event

from tests.support.fault_llm import Exchange, FaultServer
from tests.support.fault_wyoming import UTTERANCE, FaultWyoming, Peer, audio_then_silent
from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.cancel import DROPPED, INTERRUPTED, CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.remote.wyoming_link import WyomingConnection
from voice.speech_backends import synthesizer_for, transcriber_for

CUT_S = 0.5  # from the cancel to the call's return: the socket is shut, nothing waits for the server
PATIENT = Limits(idle_timeout_s=30.0)  # only the cancel can end these calls early
LONG = " ".join(f"Sentence {n} of a long reply keeps the voice busy before it answers." for n in range(14))


class Cut:
    """Cancels ``token`` from its own thread when ``when`` is set, noting the time."""

    def __init__(self, when: threading.Event, reason: str = INTERRUPTED) -> None:
        self.token = CancelToken()
        self.at = 0.0
        self._when = when
        self._reason = reason
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._when.wait(timeout=60):
            self.at = time.monotonic()
            self.token.cancel(self._reason)

    def left(self, call: Callable[[CancelToken], object]) -> tuple[SpeechServerError, float]:
        """Run ``call`` under the token; the error it was cut with and seconds from the cancel to its end."""
        with pytest.raises(SpeechServerError) as raised:
            call(self.token)
        ended = time.monotonic()
        self._thread.join(timeout=5)
        assert self.at, "the call ended before the cancel came"
        return raised.value, ended - self.at


def after(seconds: float) -> threading.Event:
    event = threading.Event()
    threading.Timer(seconds, event.set).start()
    return event


def cancelled(error: SpeechServerError, reason: str) -> None:
    assert error.code is ErrorCode.CANCELLED
    assert not error.retriable
    assert reason in str(error)


# --- scripted servers that never finish: the cancel is the only way out ---------------------------


def test_a_wyoming_voice_mid_audio_is_left_at_once_and_sees_the_close() -> None:
    with FaultWyoming(audio_then_silent) as server, synthesizer_for(server.url, limits=PATIENT) as voice:
        error, took = Cut(after(0.3)).left(lambda token: voice.synthesize("Hello there.", cancel=token))

    cancelled(error, INTERRUPTED)
    assert error.dispatch is Dispatch.ACCEPTED  # audio had started
    assert took < CUT_S


def test_an_http_voice_mid_stream_is_left_at_once_and_sees_the_close() -> None:
    closed: list[bool] = []

    def stalls(exchange: Exchange) -> None:
        exchange.send_head(headers={"content-type": "audio/pcm"})
        exchange.send(b"%x\r\n%s\r\n" % (4800, bytes(4800)))
        closed.append(exchange.wait_for_disconnect(timeout=10))

    with FaultServer(stalls) as server, synthesizer_for(server.url, limits=PATIENT) as voice:
        error, took = Cut(after(0.3)).left(lambda token: voice.synthesize("Hello there.", cancel=token))
        deadline = time.monotonic() + 5
        while not closed and time.monotonic() < deadline:
            time.sleep(0.01)

    cancelled(error, INTERRUPTED)
    assert error.dispatch is Dispatch.ACCEPTED
    assert took < CUT_S
    assert closed == [True]  # the server learns the answer is no longer read


@pytest.mark.parametrize("scheme", ["wyoming", "http"])
def test_a_transcription_talked_past_is_left_while_the_server_thinks(scheme: str) -> None:
    if scheme == "wyoming":
        context = FaultWyoming(lambda peer: peer.wait_for_close())
    else:
        context = FaultServer(lambda exchange: exchange.wait_for_disconnect(timeout=10))
    with context as server, transcriber_for(server.url, limits=PATIENT) as ears:
        error, took = Cut(after(0.3), DROPPED).left(lambda token: ears.transcribe(UTTERANCE, cancel=token))

    cancelled(error, DROPPED)
    assert took < CUT_S


def test_a_wyoming_server_that_never_accepts_is_left_while_connecting() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with (
            socket.create_connection(("127.0.0.1", port)),  # fills the one place in its accept queue
            synthesizer_for(f"wyoming://127.0.0.1:{port}", limits=PATIENT) as voice,
        ):
            error, took = Cut(after(0.3)).left(lambda token: voice.synthesize("Hello there.", cancel=token))

    cancelled(error, INTERRUPTED)
    assert error.dispatch is Dispatch.NOT_SENT
    assert took < CUT_S  # not the 15 s connect limit


def test_a_call_cancelled_before_it_starts_sends_nothing() -> None:
    requests: list[Peer] = []
    token = CancelToken()
    token.cancel(INTERRUPTED)
    with (
        FaultWyoming(requests.append) as server,
        synthesizer_for(server.url) as voice,
        pytest.raises(SpeechServerError) as raised,
    ):
        voice.synthesize("Hello there.", cancel=token)

    cancelled(raised.value, INTERRUPTED)
    assert raised.value.dispatch is Dispatch.NOT_SENT
    assert requests == []


# --- the real servers: a long reply cut after its first audio, then the next call -------------------


@pytest.fixture
def first_audio(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when a Wyoming call receives its first audio chunk (the real connection, only watched)."""
    seen = threading.Event()
    receive = WyomingConnection.receive

    def watched(connection: WyomingConnection) -> Event:
        event = receive(connection)
        if AudioChunk.is_type(event.type):
            seen.set()
        return event

    monkeypatch.setattr(WyomingConnection, "receive", watched)
    return seen


@pytest.mark.models
def test_wyoming_piper_cut_after_its_first_audio_returns_at_once_and_speaks_the_next_chunk(
    wyoming_piper: str, first_audio: threading.Event
) -> None:
    with synthesizer_for(wyoming_piper, limits=PATIENT) as voice:
        voice.synthesize("Warm.")  # the voice is loaded and its streaming support known
        first_audio.clear()
        started = time.monotonic()
        error, took = Cut(first_audio).left(lambda token: voice.synthesize(LONG, cancel=token))
        cut_after = time.monotonic() - started
        next_started = time.monotonic()
        following = voice.synthesize("Hello there.")
        next_took = time.monotonic() - next_started

    cancelled(error, INTERRUPTED)
    assert error.dispatch is Dispatch.ACCEPTED
    assert took < CUT_S, (took, cut_after)
    assert following.audio.frames > 0.3 * ENGINE_RATE
    assert next_took < 10.0, next_took  # served, not queued behind the rest of the long reply


@pytest.mark.models
def test_local_tts_studio_cut_mid_synthesis_returns_at_once_and_speaks_the_next_chunk(
    piper_http: str,
) -> None:
    with synthesizer_for(piper_http, limits=PATIENT) as voice:
        voice.synthesize("Warm.")
        error, took = Cut(after(0.3)).left(lambda token: voice.synthesize(LONG, cancel=token))
        following = voice.synthesize("Hello there.")

    cancelled(error, INTERRUPTED)
    assert took < CUT_S
    assert following.audio.frames > 0.3 * ENGINE_RATE


def twice_asked() -> AudioBlock:
    """The weather question twice: over a second of whisper work on the server, even on an idle box."""
    question = read_wav("audio/what-weather.wav").samples
    gap = np.zeros(ENGINE_RATE // 2, np.float32)
    return AudioBlock(np.concatenate([question, gap, question]), ENGINE_RATE)


@pytest.mark.models
@pytest.mark.parametrize("server", ["wyoming_whisper", "whisper_http"])
def test_a_real_transcription_talked_past_is_left_and_the_next_is_heard(
    server: str, request: pytest.FixtureRequest
) -> None:
    # Both servers finish the abandoned utterance before they take the next: that wait is theirs.
    ears: Transcriber
    with transcriber_for(request.getfixturevalue(server), limits=Limits(idle_timeout_s=120)) as ears:
        ears.transcribe(read_wav("audio/what-weather.wav"))  # the model is loaded
        utterance = twice_asked()
        error, took = Cut(after(0.2), DROPPED).left(lambda token: ears.transcribe(utterance, cancel=token))
        heard = ears.transcribe(read_wav("audio/what-weather.wav"))

    cancelled(error, DROPPED)
    assert took < CUT_S
    assert "weather" in heard.text.lower()
