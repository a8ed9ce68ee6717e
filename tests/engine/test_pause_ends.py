"""An utterance ended at a short pause on its early transcript: its reply is held until the hold's
silence passes, and a user who goes on within the hold discards it unheard and keeps talking."""

from __future__ import annotations

from tests.support.room import Room, ended_early_and_answered
from voice.audio.vad import VoiceStarted
from voice.engine.actions import CancelTurn, ResumePlayback, StopPlayback
from voice.engine.phases import Phase


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
