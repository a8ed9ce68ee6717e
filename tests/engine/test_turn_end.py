"""Ending the user's turn at a short pause when the end-of-turn model and whisper agree it is finished.

The engine is driven with a scripted VAD (pure), then through the runner with the real VAD on a recorded
question and a stand-in EndOfTurn handed to the runner, as a driver would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.room import (
    BLOCK,
    COMPLETE,
    LEAD_IN,
    NOT_YET,
    REPLY,
    Room,
    ask,
    ended_early_and_answered,
    paused,
)
from tests.support.stand_ins import RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import (
    DEFAULT_BARGE_IN,
    DEFAULT_QUIET,
    VoiceActivityDetector,
    VoiceEnded,
    VoicePaused,
    VoiceResumed,
    VoiceStarted,
)
from voice.audio.wav import read_wav
from voice.client_events import Failure, InputTranscript, SpeechStopped, StateChanged, StreamEvent
from voice.conversation.items import UserText
from voice.engine.actions import (
    CancelTurn,
    DropTranscription,
    EngineAction,
    JudgeTurnEnd,
    PausePlayback,
    Play,
    ResumePlayback,
    SendRequest,
    StopPlayback,
    Transcribe,
)
from voice.engine.engine import Engine, Phase
from voice.engine.hold import START_MS as HOLD_AFTER_EARLY_END_MS
from voice.engine.inputs import CancelReply, MicAudio, TranscriptReady, TurnEndJudged
from voice.recorder import Recorder
from voice.runtime import ActionRunner, Work
from voice.testing.stand_ins import QUESTION, WORD, EvenSynthesizer, Hears
from voice.turn_end.port import EndOfTurn

AUDIO = Path(__file__).resolve().parents[2] / "audio"


def test_a_finished_question_is_answered_at_the_short_pause() -> None:
    room = Room()
    paused(room)
    assert room.engine.handle(TranscriptReady(1, QUESTION)) == []

    actions = room.engine.handle(TurnEndJudged(1, COMPLETE))

    assert [type(a) for a in actions] == [SendRequest, PausePlayback]  # held until the pause is long
    assert room.engine.phase is Phase.HOLDING
    assert room.vad.utterances_ended == 1  # what the user says next is a new utterance
    while room.engine.phase is Phase.HOLDING:
        room.tick()  # the user stays silent: the hold passes and the utterance's end is told
    assert room.recorded().utterances()[0].end_s == BLOCK / ENGINE_RATE


def test_the_judgement_may_come_before_the_transcript() -> None:
    room = Room()
    paused(room)
    assert room.engine.handle(TurnEndJudged(1, COMPLETE)) == []

    actions = room.engine.handle(TranscriptReady(1, QUESTION))

    assert isinstance(actions[0], SendRequest)
    assert actions[0].request.items == (UserText(QUESTION),)


def test_a_pause_the_model_calls_unfinished_waits_for_the_long_silence() -> None:
    room = Room()
    utterance = paused(room)
    room.engine.handle(TranscriptReady(1, LEAD_IN))

    assert room.engine.handle(TurnEndJudged(1, NOT_YET)) == []
    assert room.engine.phase is Phase.USER_SPEAKING

    actions = room.tick(VoiceEnded(BLOCK, utterance))
    assert [type(a) for a in actions] == [SendRequest]
    assert room.vad.utterances_ended == 0


def test_a_whole_question_is_answered_at_the_short_pause_though_the_model_hears_it_unfinished() -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, QUESTION))

    actions = room.engine.handle(TurnEndJudged(1, NOT_YET))

    assert [type(a) for a in actions] == [SendRequest, PausePlayback]  # the hold still guards the pause
    assert room.engine.phase is Phase.HOLDING


@pytest.mark.parametrize(
    "text",
    [
        "Could you tell me?",
        "Can you turn the lights and",
        "What is the weather like in the.",
        "What's the weather? In time?",  # the last sentence is a scrap
    ],
)
def test_a_lead_in_or_a_sentence_left_hanging_waits_when_the_model_hears_it_unfinished(text: str) -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, text))

    assert room.engine.handle(TurnEndJudged(1, NOT_YET)) == []
    assert room.engine.phase is Phase.USER_SPEAKING


def test_a_long_utterance_whisper_left_unpunctuated_is_answered_when_the_model_is_sure() -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, "who wrote the novel middle mark"))

    actions = room.engine.handle(TurnEndJudged(1, 0.95))

    assert [type(a) for a in actions] == [SendRequest, PausePlayback]
    assert room.engine.phase is Phase.HOLDING


@pytest.mark.parametrize(
    ("text", "probability"),
    [
        ("who wrote the novel middle mark", 0.7),  # the model only leans to finished
        ("I was wondering what time it is in...", 0.95),  # trails off
        ("Set a timer", 0.95),  # short: the model alone is not enough
        ("Tell me a short story of", 0.95),  # ends on a preposition
    ],
)
def test_unpunctuated_words_wait_unless_long_and_the_model_sure(text: str, probability: float) -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, text))

    assert room.engine.handle(TurnEndJudged(1, probability)) == []
    assert room.engine.phase is Phase.USER_SPEAKING


def test_a_whole_question_is_not_answered_at_the_pause_before_the_model_has_judged_it() -> None:
    room = Room()
    paused(room)

    assert room.engine.handle(TranscriptReady(1, QUESTION)) == []
    assert room.engine.phase is Phase.USER_SPEAKING


def test_words_that_trail_off_are_not_answered_even_if_the_model_calls_them_finished() -> None:
    room = Room()
    paused(room)
    room.engine.handle(TranscriptReady(1, "I was wondering..."))

    assert room.engine.handle(TurnEndJudged(1, COMPLETE)) == []
    assert room.engine.phase is Phase.USER_SPEAKING


def test_speech_resuming_after_the_pause_cancels_the_early_end() -> None:
    room = Room()
    paused(room)

    assert room.tick(VoiceResumed(2 * BLOCK)) == [DropTranscription(1)]
    assert room.engine.handle(TurnEndJudged(1, COMPLETE)) == []
    assert room.engine.handle(TranscriptReady(1, QUESTION)) == []
    assert room.engine.phase is Phase.USER_SPEAKING
    assert room.vad.utterances_ended == 0


class FixedEndOfTurn:
    """Gives every pause the same probability, and counts the judgements asked for."""

    def __init__(self, probability: float) -> None:
        self.probability = probability
        self.asked = 0

    def probability_complete(self, audio: AudioBlock) -> float:
        self.asked += 1
        return self.probability


class BrokenEndOfTurn:
    def probability_complete(self, audio: AudioBlock) -> float:
        raise RuntimeError("model file unreadable")


def answered_after_s(end_of_turn: EndOfTurn | None, heard: str = QUESTION) -> tuple[float, list[StreamEvent]]:
    """The recorded question through the real VAD, whisper hearing ``heard``: how soon after its end (as
    the stream tells it, once certain) the LLM is asked; the stream."""
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    thinker = RecordingThinker()
    runner = ActionRunner(
        engine,
        Hears(heard),
        EvenSynthesizer(),
        thinker,
        Work(threaded=False),
        PlaybackBuffer(ENGINE_RATE),
        end_of_turn=end_of_turn,
    )
    published: list[StreamEvent] = []
    runner.events.subscribe(published.append)
    question = np.concatenate(
        (read_wav(AUDIO / "what-weather.wav").samples, np.zeros(ENGINE_RATE, np.float32))
    )
    asked_at: int | None = None
    for start in range(0, 3 * len(question), BLOCK):
        block = (
            question[start : start + BLOCK] if start + BLOCK <= len(question) else np.zeros(BLOCK, np.float32)
        )
        runner.feed(MicAudio(AudioBlock(block, ENGINE_RATE, start)))
        if thinker.sent and asked_at is None:
            asked_at = start + BLOCK
        stopped = [event.t for event in published if isinstance(event, SpeechStopped)]
        if asked_at is not None and stopped:
            (ended_s,) = stopped
            return asked_at / ENGINE_RATE - ended_s, published
    raise AssertionError("the question was never answered")


def test_a_judged_finished_turn_is_answered_400_ms_sooner_than_by_silence() -> None:
    judge = FixedEndOfTurn(COMPLETE)
    early, _ = answered_after_s(judge)
    whole_question, _ = answered_after_s(FixedEndOfTurn(NOT_YET))
    lead_in, _ = answered_after_s(FixedEndOfTurn(NOT_YET), heard=LEAD_IN)
    silence_only, _ = answered_after_s(None)

    assert judge.asked == 1
    assert early == whole_question == pytest.approx(DEFAULT_QUIET.speculate_ms / 1000, abs=0.02)
    assert lead_in == silence_only == pytest.approx(DEFAULT_QUIET.end_silence_ms / 1000, abs=0.02)


def test_a_broken_model_is_reported_and_silence_ends_the_turn() -> None:
    after_s, published = answered_after_s(BrokenEndOfTurn())

    assert after_s == pytest.approx(DEFAULT_QUIET.end_silence_ms / 1000, abs=0.02)
    (failure,) = [event for event in published if isinstance(event, Failure)]
    assert failure.code == "turn-end"
    assert "model file unreadable" in failure.message


def paused_over_the_reply(room: Room, blocks: int) -> tuple[AudioBlock, list[EngineAction]]:
    """Two words of the reply play, the user speaks for ``blocks`` more blocks and pauses: the pause's
    utterance and what the engine asked for at it."""
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)
    utterance = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)
    room.tick(VoiceStarted(room.clock))
    for _ in range(blocks):
        room.tick()
    return utterance, room.tick(VoicePaused(room.clock, utterance))


def test_a_cut_in_judged_finished_stops_the_reply_at_the_pause_and_its_answer_waits_for_the_hold() -> None:
    """Speech over a reply is judged at its pause too, and transcribed on ASR's careful path (the
    assistant's voice may be in it); the answer to it is held like any answer to an early end."""
    room = Room()
    utterance, actions = paused_over_the_reply(room, blocks=60)  # 1.2 s of speech
    paused_at = room.clock - BLOCK
    assert actions == [Transcribe(2, utterance, over_reply=True), JudgeTurnEnd(2, utterance)]  # no context
    room.engine.handle(TurnEndJudged(2, COMPLETE))
    actions = room.engine.handle(TranscriptReady(2, "Sorry, I meant on Sunday."))

    assert [type(a) for a in actions] == [CancelTurn, StopPlayback, SendRequest, PausePlayback]
    assert not room.engine.assistant_audible()  # the new answer waits for the hold
    while room.engine.phase is Phase.HOLDING:
        room.tick()
    recorded = room.recorded()
    assert recorded.turns[1].interrupted
    assert recorded.turns[1].spoken == " ".join(w.strip() for w in REPLY[:2])
    assert recorded.utterances()[-1].end_s == paused_at / ENGINE_RATE


def test_a_scrap_over_the_reply_judged_finished_is_left_to_the_long_silence() -> None:
    """Ending the turn on what the echo judgement would then throw away would resume the reply into
    the user's pause: a scrap too short to be someone cutting in waits for the long silence."""
    room = Room()
    paused_over_the_reply(room, blocks=0)  # voiced for one 20 ms block

    room.engine.handle(TurnEndJudged(2, COMPLETE))
    assert room.engine.handle(TranscriptReady(2, "Sorry.")) == []
    assert room.engine.phase is Phase.PAUSED  # the user still talks over the paused reply
    assert room.vad.utterances_ended == 0


def test_a_question_in_the_quiet_is_transcribed_on_the_quick_path() -> None:
    room = Room()
    utterance = paused(room)  # asserts Transcribe(1, utterance): over_reply False

    ended = room.tick(VoiceEnded(3 * BLOCK, utterance))

    assert ended == [DropTranscription(1), Transcribe(2, utterance)]


def test_a_reply_after_an_early_end_plays_only_once_the_pause_is_long() -> None:
    room = Room()
    queued = ended_early_and_answered(room)
    assert any(isinstance(action, Play) for action in queued)
    assert not room.engine.assistant_audible()

    waited: list[EngineAction] = []
    while not any(isinstance(action, ResumePlayback) for action in waited):
        waited = room.tick()
        assert room.clock - BLOCK <= HOLD_AFTER_EARLY_END_MS * ENGINE_RATE // 1000 + BLOCK

    assert room.clock - BLOCK >= HOLD_AFTER_EARLY_END_MS * ENGINE_RATE // 1000
    assert room.engine.assistant_audible()
    assert room.engine.phase is Phase.SPEAKING


def test_the_stream_hears_the_user_stop_and_the_assistant_think_once_the_hold_has_passed() -> None:
    room = Room()
    ended_early_and_answered(room)
    early = room.engine.take_events()
    assert [e.type for e in early] == ["input.speech_started", "state"]  # still the user's turn
    assert [e.state for e in early if isinstance(e, StateChanged)] == ["user_speaking"]

    waited: list[EngineAction] = []
    while not any(isinstance(action, ResumePlayback) for action in waited):
        waited = room.tick()

    told = [e for e in room.engine.take_events() if e.type != "response.heard"]
    assert [getattr(e, "state", e.type) for e in told] == [
        "input.speech_stopped",
        "thinking",
        "input.transcript",
        "response.created",
        "speaking",
    ]


def test_a_user_going_on_at_the_end_of_the_hold_is_not_answered_before_the_vad_calls_it_speech() -> None:
    """Resuming 480 ms into the pause, the user's voice becomes speech only some 200 ms later (the
    VAD's start window): the reply waits for that, past the long silence since the early end."""
    room = Room()
    ended_early_and_answered(room)
    voiced_end = BLOCK  # where paused() put the early end
    room.vad.voiced_until = voiced_end + 480 * ENGINE_RATE // 1000
    speech_from = voiced_end + 660 * ENGINE_RATE // 1000

    waited: list[EngineAction] = []
    while room.clock < speech_from:
        waited += room.tick()
    waited += room.tick(VoiceStarted(room.clock))

    assert room.clock - voiced_end > DEFAULT_QUIET.end_silence_ms * ENGINE_RATE // 1000
    assert not any(isinstance(action, ResumePlayback) for action in waited)
    assert not room.engine.assistant_audible()


def test_voiced_noise_in_the_hold_delays_the_reply_only_by_the_vads_start_window() -> None:
    room = Room()
    ended_early_and_answered(room)
    voiced_end = BLOCK
    latest = voiced_end + (HOLD_AFTER_EARLY_END_MS + 200) * ENGINE_RATE // 1000 + BLOCK

    waited: list[EngineAction] = []
    while not any(isinstance(action, ResumePlayback) for action in waited):
        room.vad.voiced_until = room.clock  # a hum the VAD keeps calling voiced, never speech
        waited = room.tick()
        assert room.clock <= latest

    assert room.engine.assistant_audible()


def test_the_user_going_on_within_the_hold_discards_the_request_and_is_heard_as_one_utterance() -> None:
    """The pause was mid-sentence: the prepared request is discarded unheard, and what follows is
    transcribed together with what came before, as one utterance answered by one request."""
    room = Room()
    ended_early_and_answered(room)
    room.tick()
    room.tick()
    going_on = room.clock
    assert room.tick(VoiceStarted(going_on)) == [CancelTurn(1, discarded=True), StopPlayback(1)]
    rest = AudioBlock(np.ones(BLOCK, np.float32), ENGINE_RATE, going_on)
    room.tick()

    (transcribe,) = room.tick(VoiceEnded(room.clock, rest))
    assert isinstance(transcribe, Transcribe)
    assert transcribe.audio.start == 0  # from the start of the question, through the pause
    assert transcribe.audio.end == rest.end
    assert transcribe.audio.samples[-BLOCK:].all()
    whole = "What's the weather in Paris on Friday?"
    actions = room.engine.handle(TranscriptReady(transcribe.utterance, whole))

    request = next(action for action in actions if isinstance(action, SendRequest)).request
    assert request.items == (UserText(whole),)
    told = room.engine.take_events()  # the discarded request and the first part's end never show
    recorded = Recorder()
    for record in room.engine.conversation.take_events():
        recorded.note(record)
    for event in told:
        recorded.see_event(event)
    assert recorded.turns[1].discarded
    assert [(u.start_s, u.end_s) for u in recorded.utterances()] == [
        (0.0, (room.clock - BLOCK) / ENGINE_RATE)
    ]
    assert [e.type for e in told if e.type.startswith(("input.", "response."))] == [
        "input.speech_started",
        "input.speech_stopped",
        "input.transcript",
        "response.created",
    ]
    assert [e.text for e in told if isinstance(e, InputTranscript)] == [whole]
    # the assistant is seen thinking once, about the whole sentence, never in the user's pause
    assert [e.state for e in told if isinstance(e, StateChanged)] == ["user_speaking", "thinking"]


def quiet_transcription(room: Room) -> Transcribe:
    """The user says something in the quiet: the transcription the engine asks for."""
    start = room.clock
    room.tick(VoiceStarted(start))
    actions = room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, start)))
    (transcribe,) = [action for action in actions if isinstance(action, Transcribe)]
    return transcribe


def test_speech_after_a_reply_is_transcribed_with_the_reply_as_heard() -> None:
    """ASR hears an answer in the words of what the assistant said; of a cut reply, only what was heard."""
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, len(REPLY) * WORD)
    transcribe = quiet_transcription(room)
    assert (transcribe.context, transcribe.over_reply) == ("".join(REPLY), False)

    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)
    room.engine.handle(CancelReply())  # the stop button, two words in
    assert quiet_transcription(room).context == "".join(REPLY[:2])
