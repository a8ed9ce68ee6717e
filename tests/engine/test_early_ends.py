"""Input taken at a short pause: the stream hears of it only once the user's turn is certainly over, the
user going on makes one utterance of both parts, and the hold passes in silence (or over mere noise)."""

from __future__ import annotations

import numpy as np

from voice.audio.block import AudioBlock
from voice.client_events import ResponseCreated, SpeechStopped, StateChanged, StreamEvent
from voice.engine.early_end import EarlyEnds, EarlyInput

RATE = 16_000
HOLD = RATE // 2  # a 500 ms hold
WINDOW = RATE // 10  # voiced frames become speech within 100 ms, or never


def block(start_s: float, seconds: float, level: float = 0.1) -> AudioBlock:
    return AudioBlock(np.full(round(seconds * RATE), level, np.float32), RATE, round(start_s * RATE))


def test_what_happens_while_input_is_taken_early_is_told_only_once_its_turn_is_certain() -> None:
    told: list[StreamEvent] = []
    early_ends = EarlyEnds(told.append)
    early = early_ends.taking = EarlyInput(RATE, block(0, 1), over_reply=False)

    early_ends.tell(SpeechStopped(1.0))
    early_ends.tell(StateChanged("thinking", 1.0))
    early_ends.taking = None
    early_ends.tell(ResponseCreated(1, 1.0))  # no longer being taken: told at once
    assert told == [ResponseCreated(1, 1.0)]

    early_ends.told(early)  # the hold passed
    assert told == [ResponseCreated(1, 1.0), SpeechStopped(1.0), StateChanged("thinking", 1.0)]
    assert early.told
    early_ends.told(early)  # told once
    assert len(told) == 3


def test_a_user_who_goes_on_after_the_pause_is_heard_as_one_utterance_from_its_start() -> None:
    early_ends = EarlyEnds(lambda event: None)
    first = block(0, 1.0, level=0.1)
    early_ends.continuing = EarlyInput(RATE, first, over_reply=True)

    whole = early_ends.whole(block(1.5, 0.5, level=0.2))

    assert (whole.start, whole.frames) == (0, 2 * RATE)
    assert not whole.samples[RATE : RATE + RATE // 2].any()  # the pause between, as silence
    assert early_ends.over_reply(reply_in_flight=False)  # its first part was said over a reply
    early_ends.continuing = None
    assert not early_ends.over_reply(reply_in_flight=False)


def test_the_hold_passes_after_its_silence_or_once_voiced_frames_never_became_speech() -> None:
    early = EarlyInput(RATE, block(0, 1), over_reply=False)  # the user's voice stopped at 1 s

    assert not EarlyEnds.hold_passed(early, RATE + HOLD - 1, RATE, HOLD, WINDOW)
    assert EarlyEnds.hold_passed(early, RATE + HOLD, RATE, HOLD, WINDOW)
    noise_until = RATE + HOLD  # a hum voiced through the hold, never speech
    assert not EarlyEnds.hold_passed(early, RATE + HOLD + WINDOW - 1, noise_until, HOLD, WINDOW)
    assert EarlyEnds.hold_passed(early, RATE + HOLD + WINDOW, noise_until, HOLD, WINDOW)
