"""The fault rows for speech servers: refused, killed mid-utterance, too slow, malformed, and recovery.

Every failure is one :class:`SpeechServerError` with the LLM's code, dispatch evidence and retry mark, a
message naming the server and never the server's own words.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.error import Error

from tests.support.fault_llm import Exchange, FaultServer
from tests.support.fault_wyoming import UTTERANCE, FaultWyoming, Peer, audio_then_silent
from voice.asr.port import Transcriber
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.loopback import free_port
from voice.tts.port import Synthesizer

SECRET = "server-prose-with-internal-path-/srv/secret"
FAST = Limits(connect_timeout_s=2.0, idle_timeout_s=0.4)


def speak(url: str, limits: Limits = FAST) -> SpeechServerError:
    with synthesizer_for(url, limits=limits) as synthesizer, pytest.raises(SpeechServerError) as raised:
        synthesizer.synthesize("Hello there.")
    return checked(raised.value)


def hear(url: str, limits: Limits = FAST) -> SpeechServerError:
    with transcriber_for(url, limits=limits) as transcriber, pytest.raises(SpeechServerError) as raised:
        transcriber.transcribe(UTTERANCE)
    return checked(raised.value)


def checked(error: SpeechServerError) -> SpeechServerError:
    message = str(error)
    assert "\n" not in message
    assert SECRET not in message
    return error


# --- refused connection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("form", "call"),
    [
        ("wyoming://127.0.0.1:{port}", hear),
        ("wyoming://127.0.0.1:{port}", speak),
        ("http://127.0.0.1:{port}/v1", hear),
        ("http://127.0.0.1:{port}/v1", speak),
    ],
)
def test_a_server_that_is_down_refuses_and_the_call_says_so(
    form: str, call: Callable[[str], SpeechServerError]
) -> None:
    port = free_port()
    error = call(form.format(port=port))

    assert error.code is ErrorCode.TRANSPORT
    assert error.dispatch is Dispatch.NOT_SENT
    assert error.retriable
    assert f"127.0.0.1:{port}" in str(error)
    assert "refused" in str(error).lower()


def test_a_server_that_comes_back_is_used_again_by_the_same_backend() -> None:
    port = free_port()
    transcriber = transcriber_for(f"wyoming://127.0.0.1:{port}", limits=FAST)
    with pytest.raises(SpeechServerError):
        transcriber.transcribe(UTTERANCE)

    with FaultWyoming(lambda peer: peer.send(WyomingTranscript(text="back again").event()), port=port):
        assert transcriber.transcribe(UTTERANCE).text == "back again"


# --- a server killed mid-utterance ---------------------------------------------------------------


@contextmanager
def fault_process(mode: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    command = [sys.executable, "-m", "tests.support.fault_wyoming", mode, str(port)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "listening"
            yield process, port
        finally:
            process.kill()


def killed_when_armed(process: subprocess.Popen[str], call: Callable[[], object]) -> BaseException:
    """Run ``call`` in a thread, SIGKILL the server once it is mid-answer, and return what the call raised."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed back to the test
            outcome.append(exc)

    caller = threading.Thread(target=run)
    caller.start()
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "armed"
    process.kill()
    caller.join(timeout=10)
    assert not caller.is_alive()
    assert len(outcome) == 1
    return outcome[0]


def test_a_tts_server_killed_in_the_middle_of_its_audio_fails_the_chunk() -> None:
    with fault_process("tts-half") as (process, port):
        synthesizer: Synthesizer = synthesizer_for(
            f"wyoming://127.0.0.1:{port}", limits=Limits(idle_timeout_s=30)
        )
        error = killed_when_armed(process, lambda: synthesizer.synthesize("A sentence that never ends."))

    assert isinstance(error, SpeechServerError)
    assert error.code is ErrorCode.TRANSPORT
    assert error.dispatch is Dispatch.ACCEPTED  # audio had started: the server had the request
    assert error.retriable
    assert "closed the connection" in str(error) or "broke" in str(error)


def test_an_asr_server_killed_while_the_utterance_streams_in_fails_the_transcript() -> None:
    with fault_process("asr-listening") as (process, port):
        transcriber: Transcriber = transcriber_for(
            f"wyoming://127.0.0.1:{port}", limits=Limits(idle_timeout_s=30)
        )
        error = killed_when_armed(process, lambda: transcriber.transcribe(UTTERANCE))

    assert isinstance(error, SpeechServerError)
    assert error.code is ErrorCode.TRANSPORT
    assert error.dispatch in (Dispatch.UNKNOWN, Dispatch.ACCEPTED)
    assert error.retriable


def test_an_http_tts_server_dying_mid_stream_fails_the_chunk() -> None:
    def dies(exchange: Exchange) -> None:
        exchange.send_head(headers={"content-type": "audio/pcm"})
        exchange.send(b"%x\r\n%s\r\n" % (4800, bytes(4800)))
        time.sleep(0.05)
        exchange.reset()

    with FaultServer(dies) as server:
        error = speak(server.url, Limits(idle_timeout_s=30))

    assert error.code is ErrorCode.TRANSPORT
    assert error.dispatch is Dispatch.ACCEPTED
    assert error.retriable


# --- a slow server past the limits ----------------------------------------------------------------


def silent(peer: Peer) -> None:
    peer.wait_for_close()


@pytest.mark.parametrize("call", [hear, speak])
def test_a_wyoming_server_that_never_answers_fails_at_the_idle_limit(
    call: Callable[[str], SpeechServerError],
) -> None:
    with FaultWyoming(silent) as server:
        started = time.monotonic()
        error = call(server.url)
        took = time.monotonic() - started

    assert error.code is ErrorCode.DEADLINE
    assert error.dispatch is Dispatch.UNKNOWN
    assert error.retriable
    assert "no answer for 0.4 s" in str(error)
    assert took < 2.5  # the limit, not the server's five seconds


def test_a_wyoming_voice_that_goes_silent_mid_audio_fails_at_the_idle_limit() -> None:
    with FaultWyoming(audio_then_silent) as server:
        error = speak(server.url)

    assert error.code is ErrorCode.DEADLINE
    assert error.dispatch is Dispatch.ACCEPTED
    assert "went silent for 0.4 s" in str(error)


def test_an_http_server_slower_than_the_idle_limit_fails_before_it_answers() -> None:
    def slow(exchange: Exchange) -> None:
        if not exchange.wait_for_disconnect(timeout=5):
            exchange.respond(200, {"text": "too late"})

    with FaultServer(slow) as server:
        started = time.monotonic()
        error = hear(server.url)
        took = time.monotonic() - started

    assert error.code is ErrorCode.DEADLINE
    assert error.retriable
    assert took < 2.5


def test_an_http_voice_that_stalls_mid_stream_fails_at_the_idle_limit() -> None:
    def stalls(exchange: Exchange) -> None:
        exchange.send_head(headers={"content-type": "audio/pcm"})
        exchange.send(b"%x\r\n%s\r\n" % (4800, bytes(4800)))
        exchange.wait_for_disconnect(timeout=5)

    with FaultServer(stalls) as server:
        error = speak(server.url)

    assert error.code is ErrorCode.DEADLINE
    assert error.dispatch is Dispatch.ACCEPTED


# --- malformed frames -----------------------------------------------------------------------------


def raw(data: bytes) -> Callable[[Peer], None]:
    return lambda peer: peer.send_raw(data)


@pytest.mark.parametrize(
    ("script", "what"),
    [
        (raw(b"this is not json\n"), "a header that is not a JSON object with a type"),
        (raw(b'{"data": {}}\n'), "a header that is not a JSON object with a type"),
        (raw(b'{"type": "audio-start", "data_length": -3}\n'), "the header's data_length"),
        (raw(b'{"type": "audio-start", "data_length": 9}\n{"rate": }'), "the data block"),
        (
            raw(b'{"type": "audio-chunk", "data": {"rate": 22050, "width": 2, "channels": 1}}\n'),
            "an audio chunk",
        ),
        (raw(b"x" * 70_000 + b"\n"), "a header line longer than 64 KiB"),
        (
            raw(b'{"type": "audio-start", "data": {"rate": 22050, "width": 3, "channels": 1}}\n'),
            "an audio sample width of 3 bytes",
        ),
        (
            raw(b'{"type": "audio-start", "data": {"rate": "fast", "width": 2, "channels": 1}}\n'),
            "an audio rate",
        ),
    ],
)
def test_a_malformed_wyoming_frame_is_a_protocol_error(script: Callable[[Peer], None], what: str) -> None:
    with FaultWyoming(script) as server:
        error = speak(server.url)

    assert error.code is ErrorCode.PROTOCOL
    assert not error.retriable
    assert f"malformed frame: {what}" in str(error)


def test_a_wyoming_error_event_keeps_its_code_but_not_its_text() -> None:
    with FaultWyoming(lambda peer: peer.send(Error(text=SECRET, code="VoiceNotFound").event())) as server:
        error = speak(server.url)

    assert error.code is ErrorCode.UNAVAILABLE
    assert error.dispatch is Dispatch.ACCEPTED
    assert "[VoiceNotFound]" in str(error)


def test_a_transcript_without_text_is_a_protocol_error() -> None:
    with FaultWyoming(raw(b'{"type": "transcript", "data": {"words": 3}}\n')) as server:
        error = hear(server.url)

    assert error.code is ErrorCode.PROTOCOL
    assert "a transcript without text" in str(error)


def answer(status: int, body: bytes, content_type: str) -> Callable[[Exchange], None]:
    def script(exchange: Exchange) -> None:
        head = f"HTTP/1.1 {status} Scripted\r\ncontent-type: {content_type}\r\n"
        exchange.send(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)

    return script


def test_an_http_transcript_that_is_not_json_is_a_protocol_error() -> None:
    with FaultServer(answer(200, b"<html>" + SECRET.encode(), "text/html")) as server:
        error = hear(server.url)

    assert error.code is ErrorCode.PROTOCOL
    assert "an answer that is not JSON" in str(error)


def test_an_http_voice_answering_text_instead_of_audio_is_a_protocol_error() -> None:
    with FaultServer(answer(200, SECRET.encode(), "text/plain")) as server:
        error = speak(server.url)

    assert error.code is ErrorCode.PROTOCOL
    assert "text/plain instead of audio" in str(error)


@pytest.mark.parametrize(
    ("status", "code", "retriable"),
    [
        (500, ErrorCode.UNAVAILABLE, True),
        (503, ErrorCode.UNAVAILABLE, True),
        (429, ErrorCode.RATE_LIMITED, True),
        (404, ErrorCode.UNSUPPORTED, False),
        (401, ErrorCode.UNAUTHORIZED, False),
        (400, ErrorCode.INVALID, False),
    ],
)
def test_an_http_error_status_maps_like_the_llms(status: int, code: ErrorCode, retriable: bool) -> None:
    body = b'{"error": {"message": "%s"}}' % SECRET.encode()
    with FaultServer(answer(status, body, "application/json")) as server:
        error = speak(server.url)

    assert error.code is code
    assert error.retriable is retriable
    assert f"HTTP {status}" in str(error)
