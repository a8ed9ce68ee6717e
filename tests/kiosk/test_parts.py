"""The kiosk's pure parts: commands, who may connect, the wake phrase, reading pace, log pruning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.engine.inputs import CancelReply, MuteMicrophone, TextInput
from voice.errors import ConfigError
from voice.kiosk.protocol import BadFrame, ResetSession, parse_command
from voice.kiosk.security import check_bind, is_loopback, origin_ok, token_ok
from voice.kiosk.sessions import SessionFiles
from voice.kiosk.silent import ReadingPace
from voice.kiosk.wake import Sleep, WakeGate, after_phrase
from voice.testing.stand_ins import Hears


def test_commands_parse_to_what_they_ask_for() -> None:
    assert parse_command('{"type": "input.text", "id": "a", "text": "Hi"}') == TextInput("Hi", "a")
    assert parse_command('{"type": "input.text", "text": "Hi"}') == TextInput("Hi", None)
    assert parse_command('{"type": "response.cancel"}') == CancelReply()
    assert parse_command('{"type": "mic.mute"}') == MuteMicrophone(True)
    assert parse_command('{"type": "mic.unmute"}') == MuteMicrophone(False)
    assert parse_command('{"type": "session.reset"}') == ResetSession()


@pytest.mark.parametrize(
    "frame",
    ['{"type": "input.text", "text": "   "}', '{"type": "input.text", "text": "' + "x" * 4001 + '"}', "null"],
)
def test_empty_overlong_or_non_object_input_is_a_bad_frame(frame: str) -> None:
    with pytest.raises(BadFrame):
        parse_command(frame)


def test_only_loopback_binds_go_without_a_token() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "::1", "localhost"))
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "token")
    with pytest.raises(ConfigError, match="set VOICE_TOKEN"):
        check_bind("192.168.1.5", None)


def test_the_token_is_taken_from_the_header_or_the_query() -> None:
    assert token_ok(None, "/ws", None)
    assert token_ok("t", "/ws?token=t", None)
    assert token_ok("t", "/ws", "Bearer t")
    assert not token_ok("t", "/ws", None)
    assert not token_ok("t", "/ws?token=x", "Bearer y")


def test_browsers_come_from_the_page_or_an_allowed_origin() -> None:
    assert origin_ok(None, "127.0.0.1:8765", ())
    assert origin_ok("http://127.0.0.1:8765", "127.0.0.1:8765", ())
    assert origin_ok("https://screen.example", "127.0.0.1:8765", ["https://screen.example/"])
    assert not origin_ok("http://evil.example", "127.0.0.1:8765", ["https://screen.example"])


def test_the_words_after_the_wake_phrase_are_the_input() -> None:
    assert after_phrase("Hey, kiosk! What is on today?", "hey kiosk") == "What is on today?"
    assert after_phrase("hey kiosk", "hey kiosk") == ""
    assert after_phrase("Hey there, what is on?", "hey kiosk") is None


def test_asleep_only_the_wake_phrase_gets_through_and_wakes_it() -> None:
    woken: list[bool] = []
    sleep = Sleep(lambda: woken.append(True))
    sleep.fall_asleep()
    audio = AudioBlock(np.zeros(160, np.float32), ENGINE_RATE)

    def heard(text: str) -> str:
        return WakeGate(Hears(text), "hey kiosk", sleep).transcribe(audio).text

    assert heard("What is on today?") == ""
    assert sleep.asleep
    assert heard("Hey kiosk, what is on?") == "what is on?"
    assert not sleep.asleep
    assert woken == [True]
    assert heard("And tomorrow?") == "And tomorrow?"


def test_reading_pace_gives_every_word_its_time_in_order() -> None:
    synthesis = ReadingPace(syllable_s=0.2).synthesize("Hello there, visitor.")
    assert [word.text for word in synthesis.words] == ["Hello", "there,", "visitor."]
    assert synthesis.words[0].start == 0
    assert synthesis.words[0].end == round(2 * 0.2 * ENGINE_RATE)  # two syllables
    assert all(a.end <= b.start for a, b in zip(synthesis.words, synthesis.words[1:], strict=False))
    assert synthesis.audio.frames == synthesis.words[-1].end
    assert not synthesis.audio.samples.any()


def test_only_the_newest_session_logs_are_kept(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path, keep=2)
    paths = []
    for _ in range(4):
        log = files.create()
        paths.append(log.path)
        log.close()
    assert files.logs() == paths[-2:]
