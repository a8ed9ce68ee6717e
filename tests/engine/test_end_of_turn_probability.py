"""How sure the end-of-turn model must be before a pause ends a short turn: finished more likely than not.

A short lead-in that sounds finished ("Set a timer.") is where the model decides; a whole sentence of
several words ends the turn on whisper's word alone (test_turn_end.py).
"""

from __future__ import annotations

import pytest

from tests.support.room import LEAD_IN, Room, paused
from voice.engine.actions import SendRequest
from voice.engine.inputs import TranscriptReady, TurnEndJudged
from voice.engine.phases import Phase


@pytest.mark.parametrize("probability", [0.35, 0.45, 0.5])
def test_a_pause_the_model_is_unsure_of_waits_for_the_long_silence(probability: float) -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, LEAD_IN))

    assert room.engine.handle(TurnEndJudged(1, probability)) == []
    assert room.engine.phase is Phase.USER_SPEAKING


@pytest.mark.parametrize("probability", [0.55, 0.65])
def test_a_pause_the_model_calls_more_likely_finished_is_answered(probability: float) -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, LEAD_IN))

    actions = room.engine.handle(TurnEndJudged(1, probability))

    assert isinstance(actions[0], SendRequest)
    assert room.engine.phase is Phase.HOLDING  # answered, the reply held for the hold
