"""A reply in flight: its text spoken piece by piece in order, and a retry that drops the failed attempt's
late pieces and starts the listener's words afresh."""

from __future__ import annotations

import numpy as np
import pytest

from voice.audio.block import AudioBlock
from voice.conversation.continuation import Request
from voice.conversation.ledger import PlaybackLedger
from voice.engine.actions import Synthesize
from voice.engine.inputs import SynthesisReady
from voice.engine.reply import Reply
from voice.engine.reply_report import ReplyReport
from voice.errors import ProtocolError
from voice.tts.port import Synthesis, WordTiming

RATE = 16_000
WORD = 4_000


def voice_of(turn: int, chunk: int, text: str) -> SynthesisReady:
    words = text.split()
    timings = tuple(WordTiming(w, i * WORD, (i + 1) * WORD) for i, w in enumerate(words))
    audio = AudioBlock(np.zeros(len(words) * WORD, np.float32), RATE)
    return SynthesisReady(turn, chunk, Synthesis(audio, timings))


def new_reply(text: str) -> Reply:
    ledger = PlaybackLedger()
    ledger.add_text(text)
    ledger.close_text()
    return Reply(Request(1, ()), ledger, ReplyReport(1, RATE))


def test_pieces_are_voiced_in_order_and_queued_one_after_another() -> None:
    reply = new_reply("Tomorrow starts dry, then rain.")

    asked = reply.speak(["Tomorrow starts dry,", "then rain."])
    first = reply.voiced(voice_of(1, 0, "Tomorrow starts dry,"))
    second = reply.voiced(voice_of(1, 1, "then rain."))

    assert asked == [Synthesize(1, 0, "Tomorrow starts dry,"), Synthesize(1, 1, "then rain.")]
    assert (first.at, second.at) == (0, 3 * WORD)  # the second piece plays after the first
    assert reply.ledger.queued == 5 * WORD
    reply.paused = True
    assert not reply.audible  # queued, but paused
    reply.paused = False
    assert reply.audible


def test_a_piece_voiced_out_of_order_is_refused() -> None:
    reply = new_reply("One. Two.")
    reply.speak(["One.", "Two."])

    with pytest.raises(ProtocolError, match="chunk 1 synthesized before chunk 0"):
        reply.voiced(voice_of(1, 1, "Two."))


def test_a_retry_drops_the_failed_attempts_late_pieces_and_numbers_on() -> None:
    reply = new_reply("Well hello")
    reply.speak(["Well hello"])
    retried = PlaybackLedger()
    retried.add_text("Hello there.")
    retried.close_text()

    reply.retry(Request(1, ()), retried)

    assert reply.attempt == 2
    assert reply.stale(0)  # the first attempt's piece, if it comes back now
    assert reply.speak(["Hello there."]) == [Synthesize(1, 1, "Hello there.")]
    assert not reply.stale(1)
    assert reply.voiced(voice_of(1, 1, "Hello there.")).at == 0  # the retried reply's first sample
