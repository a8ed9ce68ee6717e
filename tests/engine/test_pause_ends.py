"""An utterance ended at a short pause on its early transcript: its reply is held until the hold's
silence passes, and a user who goes on within the hold discards it unheard and keeps talking."""

from __future__ import annotations

import numpy as np

from tests.support.room import BLOCK, COMPLETE, REPLY, Room, ask, ended_early_and_answered
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import PAUSE_OVER_REPLY_MS, VoicePaused, VoiceStarted
from voice.engine.actions import CancelTurn, JudgeTurnEnd, ResumePlayback, StopPlayback, Transcribe
from voice.engine.inputs import TranscriptReady, TurnEndJudged
from voice.engine.phases import Phase
from voice.testing.stand_ins import WORD


def test_a_turn_ended_at_a_pause_is_answered_at_once_but_its_reply_is_held() -> None:
    room = Room()
    ended_early_and_answered(room)

    held = room.engine.pause_ends.held

    assert held is not None
    assert held.number == room.engine.active_turn
    assert room.engine.pause_ends.play_if_hold_passed(room.clock) == []  # no silence yet: still held


def test_the_held_reply_plays_once_the_user_stayed_silent_through_the_hold() -> None:
    room = Room()
    ended_early_and_answered(room)
    later = room.clock + room.engine.hold.samples + room.vad.start_window

    played = room.engine.pause_ends.play_if_hold_passed(later)

    assert played[0] == ResumePlayback(1)
    assert room.engine.pause_ends.held is None
    assert room.engine.phase is Phase.SPEAKING


def test_going_on_within_the_hold_discards_the_reply_unheard_and_the_user_keeps_talking() -> None:
    room = Room()
    ended_early_and_answered(room)

    actions = room.tick(VoiceStarted(room.clock))

    assert actions[:2] == [CancelTurn(1, True), StopPlayback(1)]  # discarded: never told, never heard
    assert room.engine.active_turn is None
    assert room.engine.phase is Phase.USER_SPEAKING


def test_an_answer_to_a_cut_in_ended_at_its_pause_waits_out_a_breath_after_its_first_word() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)
    onset = room.clock
    room.tick(VoiceStarted(onset))
    room.clock += ENGINE_RATE // 2
    voiced_end = room.clock
    said = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, onset)
    offered = room.tick(VoicePaused(voiced_end, said))
    early, judge = [a for a in offered if isinstance(a, Transcribe | JudgeTurnEnd)]
    room.engine.handle(TranscriptReady(early.utterance, "No."))
    cut = room.engine.handle(TurnEndJudged(judge.utterance, COMPLETE))  # "No." sounds finished: cut, asked
    assert cut[:2] == [CancelTurn(1), StopPlayback(1)]
    room.synthesize(room.stream(2, REPLY))
    auto_hold_passed = voiced_end + room.engine.hold.samples + BLOCK
    breath_passed = voiced_end + PAUSE_OVER_REPLY_MS * ENGINE_RATE // 1000

    assert (
        room.engine.pause_ends.play_if_hold_passed(auto_hold_passed) == []
    )  # "No, ... in Celsius." may go on
    assert room.engine.pause_ends.play_if_hold_passed(breath_passed)[0] == ResumePlayback(2)
