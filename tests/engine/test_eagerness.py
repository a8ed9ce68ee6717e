"""Eagerness in the engine: ``high`` plays an answer to a turn ended at a pause at once, ``low`` waits
for the long silence, and ``auto``'s hold changes are written to the session log."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.paths import AUDIO
from tests.support.room import BLOCK, COMPLETE, REPLY, Room, ended_early_and_answered, paused
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoicePaused, VoiceStarted
from voice.audio.wav import read_wav
from voice.components import make_engine
from voice.conversation.log_records import HoldChanged
from voice.engine.actions import JudgeTurnEnd, PausePlayback, ResumePlayback, SendRequest, Transcribe
from voice.engine.engine import Engine
from voice.engine.hold import START_MS, Eagerness, Hold
from voice.engine.inputs import MicAudio, TranscriptReady, TurnEndJudged
from voice.engine.phases import Phase
from voice.testing.stand_ins import QUESTION, WORD


def room_with(eagerness: Eagerness) -> Room:
    room = Room()
    room.engine = Engine(room.vad, hold=Hold(eagerness))
    return room


def test_high_plays_the_answer_as_soon_as_it_is_ready_with_no_hold() -> None:
    room = room_with(Eagerness.HIGH)
    paused(room)
    room.engine.handle(TranscriptReady(1, QUESTION))
    actions = room.engine.handle(TurnEndJudged(1, COMPLETE))
    assert [type(a) for a in actions] == [SendRequest, PausePlayback, ResumePlayback]

    room.synthesize(room.stream(1, REPLY))

    assert room.engine.assistant_audible()  # playing within the user's pause
    assert room.engine.phase is Phase.SPEAKING


def test_high_cut_by_the_user_going_on_merges_their_words_into_one_user_item() -> None:
    room = room_with(Eagerness.HIGH)
    paused(room)
    room.engine.handle(TranscriptReady(1, "Set a timer."))
    room.engine.handle(TurnEndJudged(1, COMPLETE))
    room.synthesize(room.stream(1, REPLY))
    room.tick()  # a block of it plays: no word is heard yet

    going_on = room.clock
    assert PausePlayback(1) in room.tick(VoiceStarted(going_on))  # at barge-in speed
    for _ in range(40):  # 0.8 s of "for ten minutes"
        room.tick()
    rest = AudioBlock(np.ones(room.clock - going_on, np.float32), ENGINE_RATE, going_on)
    (transcribe,) = room.tick(VoiceEnded(room.clock, rest))
    assert isinstance(transcribe, Transcribe)
    actions = room.engine.handle(TranscriptReady(transcribe.utterance, "for ten minutes."))

    record = room.recorded().turns[1]
    assert record.interrupted
    assert record.spoken == ""
    request = next(a for a in actions if isinstance(a, SendRequest)).request
    (item,) = request.items  # no assistant item: nothing was heard
    assert item.text.startswith("Set a timer.")
    assert item.text.endswith("for ten minutes.")


def test_low_waits_for_the_long_silence_even_when_the_turn_sounds_finished() -> None:
    room = room_with(Eagerness.LOW)
    utterance = AudioBlock(np.zeros(2 * BLOCK, np.float32), ENGINE_RATE, 0)
    room.tick(VoiceStarted(0))
    asked = room.tick(VoicePaused(BLOCK, utterance))
    assert asked == [Transcribe(1, utterance)]  # speculative ASR still; nobody judges the pause
    assert not any(isinstance(a, JudgeTurnEnd) for a in asked)
    assert room.engine.handle(TranscriptReady(1, QUESTION)) == []
    assert room.engine.phase is Phase.USER_SPEAKING

    actions = room.tick(VoiceEnded(BLOCK, utterance))  # the long silence

    assert [type(a) for a in actions] == [SendRequest]  # and it plays as soon as it is ready
    assert room.vad.utterances_ended == 0


def test_auto_writes_each_change_of_the_hold_to_the_session_log() -> None:
    room = Room()
    ended_early_and_answered(room)
    going_on = room.clock + 4 * BLOCK
    while room.clock < going_on:
        room.tick()
    room.tick(VoiceStarted(going_on))  # went on within the hold: it was a pause
    logged = room.engine.conversation.take_events()
    assert not [e for e in logged if isinstance(e, HoldChanged)]  # learned, applied from the next end

    rest = AudioBlock(np.ones(BLOCK, np.float32), ENGINE_RATE, going_on)
    room.tick()
    (transcribe,) = room.tick(VoiceEnded(room.clock, rest))
    assert isinstance(transcribe, Transcribe)
    utterance = AudioBlock(np.zeros(room.clock, np.float32), ENGINE_RATE, 0)
    room.tick(VoiceStarted(room.clock))
    pause = room.clock
    room.tick(VoicePaused(pause, utterance))
    room.engine.handle(TranscriptReady(transcribe.utterance + 1, QUESTION))
    room.engine.handle(TurnEndJudged(transcribe.utterance + 1, COMPLETE))

    (change,) = [e for e in room.engine.conversation.take_events() if isinstance(e, HoldChanged)]
    assert change.was_ms == START_MS
    assert change.hold_ms > START_MS
    assert "ms pause" in change.why


def test_auto_lengthens_the_hold_when_the_user_cuts_an_answer_played_into_their_pause() -> None:
    room = Room()
    ended_early_and_answered(room)
    voiced_end = BLOCK  # where paused() put the early end
    while not room.engine.assistant_audible():
        room.tick()  # the hold passes and the answer plays

    going_on = room.clock
    assert PausePlayback(1) in room.tick(VoiceStarted(going_on))
    for _ in range(40):
        room.tick()
    rest = AudioBlock(np.ones(room.clock - going_on, np.float32), ENGINE_RATE, going_on)
    (transcribe,) = room.tick(VoiceEnded(room.clock, rest))
    assert isinstance(transcribe, Transcribe)
    room.engine.handle(TranscriptReady(transcribe.utterance, "in Paris on Friday."))

    assert room.recorded().turns[1].interrupted
    pause_ms = (going_on - voiced_end) * 1000 // ENGINE_RATE
    assert room.engine.hold.next_ms >= pause_ms + 100  # the next answer waits past such a pause


def answered_at_a_pause(room: Room, probability: float) -> int:
    """The user says a question and stops; the turn ends at the pause, its reply plays whole, and the user
    stays quiet for 1.5 s. Returns how long after their last voiced sample the reply began to play (ms)."""
    start = room.clock
    room.tick(VoiceStarted(start))
    for _ in range(50):  # a second of speech
        room.tick()
    voiced_end = room.clock
    utterance = AudioBlock(np.zeros(voiced_end - start, np.float32), ENGINE_RATE, start)
    transcribe, _ = room.tick(VoicePaused(voiced_end, utterance))
    assert isinstance(transcribe, Transcribe)
    room.engine.handle(TranscriptReady(transcribe.utterance, QUESTION))
    (request, *_) = room.engine.handle(TurnEndJudged(transcribe.utterance, probability))
    assert isinstance(request, SendRequest)
    room.synthesize(room.stream(request.request.turn, REPLY))
    while ResumePlayback(request.request.turn) not in room.tick():
        assert room.clock - voiced_end < ENGINE_RATE  # the hold never reaches a second here
    waited_ms = (room.clock - voiced_end) * 1000 // ENGINE_RATE
    room.play(request.request.turn, len(REPLY) * WORD)
    for _ in range(75):
        room.tick()
    return waited_ms


def test_auto_answers_a_speaker_who_never_pauses_mid_turn_within_260_ms_and_no_sooner() -> None:
    """Each turn that stays ended shortens the hold by up to 60 ms, down to its floor of 250 ms (the next
    20 ms block tells it); the session log says where it stopped."""
    room = Room()
    waits = [answered_at_a_pause(room, probability=0.99) for _ in range(8)]

    assert waits == [520, 480, 420, 360, 300, 260, 260, 260]
    changes = [e for e in room.engine.conversation.take_events() if isinstance(e, HoldChanged)]
    assert [change.hold_ms for change in changes] == [461, 402, 343, 284, 250]


@pytest.mark.parametrize(("eagerness", "pause_ms"), [(Eagerness.HIGH, 100), (Eagerness.AUTO, 200)])
def test_high_asks_whether_the_turn_is_over_100_ms_into_the_pause_where_auto_waits_200(
    eagerness: Eagerness, pause_ms: int
) -> None:
    """The assistant's engine and VAD on a recorded question: how soon whisper and Smart Turn are asked."""
    engine = make_engine(eagerness=eagerness)
    question = read_wav(AUDIO / "what-weather.wav").samples
    audio = np.concatenate((question, np.zeros(ENGINE_RATE // 2, np.float32)))
    waited_ms: list[int] = []  # from the last voiced frame to the block that asks for a judgement
    for start in range(0, audio.size - BLOCK + 1, BLOCK):
        block = AudioBlock(audio[start : start + BLOCK], ENGINE_RATE, start)
        if any(isinstance(a, JudgeTurnEnd) for a in engine.handle(MicAudio(block))):
            waited_ms.append((block.end - engine.voiced_until) * 1000 // ENGINE_RATE)

    assert waited_ms == [pause_ms]
