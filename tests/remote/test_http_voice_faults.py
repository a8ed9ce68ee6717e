"""The fault rows that a real OpenAI-compatible voice can show: local-tts-studio (piper) on loopback.

Malformed answers are the scripted servers' part (tests/remote/test_faults.py): a real server sends none.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.speech_backends import synthesizer_for
from voice.testing.loopback import free_port
from voice.testing.speech_servers import LOCAL_TTS_RATE, local_tts_command, local_tts_home, running

pytestmark = pytest.mark.models

# Seconds of piper work on 2 cores before the server answers anything: it sends a reply's audio whole.
LONG = " ".join(f"Sentence {n} of a long reply keeps the voice busy before it answers." for n in range(14))


def test_a_voice_slower_than_the_idle_limit_fails_and_serves_the_next_call(piper_http: str) -> None:
    with synthesizer_for(piper_http, limits=Limits(idle_timeout_s=0.3)) as impatient:
        started = time.monotonic()
        with pytest.raises(SpeechServerError) as raised:
            impatient.synthesize(LONG)
        took = time.monotonic() - started

    assert raised.value.code is ErrorCode.DEADLINE
    assert raised.value.dispatch is Dispatch.UNKNOWN  # sent, and no answer yet
    assert raised.value.retriable
    assert took < 2.5  # the limit, not the synthesis
    with synthesizer_for(piper_http) as patient:
        assert patient.synthesize("Still here.").audio.frames > 0


def test_a_voice_server_killed_mid_synthesis_fails_the_chunk_and_serves_once_back(tmp_path: Path) -> None:
    port, env = free_port(), local_tts_home(tmp_path)
    outcome: list[BaseException] = []
    with synthesizer_for(f"http://127.0.0.1:{port}/v1?rate={LOCAL_TTS_RATE}") as synthesizer:

        def speak_long() -> None:
            try:
                synthesizer.synthesize(LONG)
            except BaseException as exc:  # handed back to the test
                outcome.append(exc)

        with running(local_tts_command(port), port, tmp_path / "first.log", env) as server:
            assert synthesizer.synthesize("Warm.").audio.frames > 0  # loaded: the long call is all work
            caller = threading.Thread(target=speak_long)
            caller.start()
            time.sleep(0.5)
            server.kill()
            caller.join(timeout=10)

        assert not caller.is_alive()
        assert len(outcome) == 1
        assert isinstance(outcome[0], SpeechServerError), outcome
        assert outcome[0].code is ErrorCode.TRANSPORT
        assert outcome[0].dispatch is Dispatch.UNKNOWN
        assert outcome[0].retriable
        with running(local_tts_command(port), port, tmp_path / "second.log", env):
            assert synthesizer.synthesize("I am back.").audio.frames > 0


def test_a_wrong_key_and_a_voice_not_ready_are_told_without_the_servers_words(tmp_path: Path) -> None:
    port = free_port()
    env = local_tts_home(tmp_path, api_key="right-key", voice="en_US-nobody-medium")
    url = f"http://127.0.0.1:{port}/v1?rate={LOCAL_TTS_RATE}"
    with running(local_tts_command(port), port, tmp_path / "server.log", env):
        with synthesizer_for(url, api_key="wrong-key") as wrong, pytest.raises(SpeechServerError) as refused:
            wrong.synthesize("Hello.")
        with synthesizer_for(url, api_key="right-key") as right, pytest.raises(SpeechServerError) as unready:
            right.synthesize("Hello.")

    assert refused.value.code is ErrorCode.UNAUTHORIZED
    assert not refused.value.retriable
    assert "HTTP 401" in str(refused.value)
    assert "API key" in str(refused.value)
    assert unready.value.code is ErrorCode.UNAVAILABLE
    assert unready.value.retriable
    assert "HTTP 503" in str(unready.value)
    for error in (refused.value, unready.value):
        assert "Incorrect" not in str(error)
        assert "nobody" not in str(error)
