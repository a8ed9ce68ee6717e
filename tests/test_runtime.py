"""The action runner between the engine and the heavy parts: how reply audio is counted as heard.

Whisper, piper and the LLM are stand-ins here (their real runs are in tests/sim); the engine, the VAD,
the playback buffer and the runner are the real ones.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tests.support.paths import AUDIO
from tests.support.stand_ins import NotingTranscriber, RecordingThinker
from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import (
    DEFAULT_BARGE_IN,
    DEFAULT_QUIET,
    VadEvent,
    VoiceActivityDetector,
    VoiceEnded,
    VoicePaused,
    VoiceStarted,
)
from voice.audio.wav import read_wav
from voice.cancel import INTERRUPTED, CancelToken
from voice.client_events import event_json
from voice.conversation.items import UserText
from voice.conversation.session_log import SessionLog
from voice.engine.engine import Engine
from voice.engine.inputs import LlmDone, LlmFailed, LlmText, MicAudio, TextInput
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.port import ChatEvent, ChatRequest, ChatSettings
from voice.recorder import Recorder
from voice.runtime import ActionRunner, ChatModelThinker, Thinker, Work
from voice.testing.stand_ins import WORD, EvenSynthesizer, Hears, ScriptedVad
from voice.tts.port import Synthesis, Synthesizer

BLOCK = 320


def test_a_retried_reply_is_counted_from_its_own_first_sample() -> None:
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    thinker = RecordingThinker()
    buffer = PlaybackBuffer(ENGINE_RATE)
    runner = ActionRunner(engine, Hears(), EvenSynthesizer(), thinker, Work(False), buffer)
    recorder = Recorder.following(runner)
    question = np.concatenate(
        (read_wav(AUDIO / "what-weather.wav").samples, np.zeros(ENGINE_RATE, np.float32))
    )
    for start in range(0, len(question) - BLOCK, BLOCK):
        runner.feed(MicAudio(AudioBlock(question[start : start + BLOCK], ENGINE_RATE, start)))
    (request,) = thinker.sent

    for word in ["Well", " hello", " there,", " my"]:  # the first attempt's first clause is queued...
        runner.feed(LlmText(request.turn, word))
    unavailable = LLMError(ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, "HTTP 503", retriable=True)
    runner.feed(LlmFailed(request.turn, unavailable))  # ...then the stream fails before a word was heard
    assert len(thinker.sent) == 2
    for word in ["Hello", " there,", " how", " can", " I", " help?"]:
        runner.feed(LlmText(request.turn, word))
    runner.feed(LlmDone(request.turn))
    clock = len(question)
    for _ in range(2 * WORD // BLOCK + 1):  # two words of the retried reply, after the stop's 5 ms fade
        buffer.pull(BLOCK)
        clock += BLOCK
        runner.report_progress(buffer.audio_played_to, clock)

    assert recorder.turns[1].spoken == "Hello there,"


def test_the_stream_hears_when_a_reply_began_to_play_and_where_its_audio_stopped() -> None:
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    thinker = RecordingThinker()
    buffer = PlaybackBuffer(ENGINE_RATE)
    runner = ActionRunner(engine, Hears(), EvenSynthesizer(), thinker, Work(False), buffer)
    events: list[dict[str, object]] = []
    runner.events.subscribe(lambda event: events.append(event_json(event)))
    question = read_wav(AUDIO / "what-weather.wav").samples
    question = np.concatenate((question, np.zeros(ENGINE_RATE, np.float32)))
    for start in range(0, len(question) - BLOCK, BLOCK):
        runner.feed(MicAudio(AudioBlock(question[start : start + BLOCK], ENGINE_RATE, start)))
    (request,) = thinker.sent
    for word in ["Hello", " there."]:
        runner.feed(LlmText(request.turn, word))
    runner.feed(LlmDone(request.turn))
    clock = len(question)
    while engine.active_turn is not None:
        buffer.pull(BLOCK)
        clock += BLOCK
        runner.report_progress(buffer.audio_played_to, clock)

    audio = [(e["type"], e["turn"], e["t"]) for e in events if str(e["type"]).startswith("output_audio")]
    assert audio == [
        ("output_audio.started", 1, round(len(question) / ENGINE_RATE, 3)),
        ("output_audio.stopped", 1, round(clock / ENGINE_RATE, 3)),
    ]


def test_a_new_conversation_cuts_the_turn_in_flight_and_goes_on_in_a_fresh_log(tmp_path: Path) -> None:
    thinker = RecordingThinker()
    runner, old_log, recorder = make_runner(tmp_path, Hears(), EvenSynthesizer(), thinker, Work(False))
    speak_question(runner)
    runner.feed(LlmText(1, "Tomorrow starts dry."))

    new_log = SessionLog.create(tmp_path / "next.jsonl")
    runner.new_conversation(new_log)
    runner.feed(TextInput("And on Sunday?", "in-1"))
    new_log.close()

    assert runner.session_log is new_log
    assert logged_types(old_log.path)[-1] == "turn_end"  # the old log has the cut, closed
    assert [request.turn for request in thinker.sent] == [1, 2]  # turns number on
    assert thinker.sent[1].items == (UserText("And on Sunday?"),)
    assert runner.history() == (UserText("And on Sunday?"),)
    assert runner.inputs_taken == 1
    assert "turn_start" in logged_types(tmp_path / "next.jsonl")
    assert recorder.turns[1].interrupted


# -- work that fails: every failure reaches the engine, nothing waits forever ---------------------


class BrokenSynthesizer:
    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        raise RuntimeError("onnxruntime failed")


class BrokenChatModel:
    """A client bug rather than an LLMError: it must not vanish in the worker."""

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        raise KeyError("choices")


def speak_question(runner: ActionRunner) -> int:
    """Plays the recorded question into the runner's mic, then a second of silence; returns the clock."""
    question = np.concatenate(
        (read_wav(AUDIO / "what-weather.wav").samples, np.zeros(ENGINE_RATE, np.float32))
    )
    for start in range(0, len(question) - BLOCK, BLOCK):
        runner.feed(MicAudio(AudioBlock(question[start : start + BLOCK], ENGINE_RATE, start)))
    return len(question)


def logged_types(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text().splitlines()]


def make_runner(
    tmp_path: Path, transcriber: Transcriber, synthesizer: Synthesizer, thinker: Thinker, work: Work
) -> tuple[ActionRunner, SessionLog, Recorder]:
    log = SessionLog.create(tmp_path / "session.jsonl")
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    buffer = PlaybackBuffer(ENGINE_RATE)
    runner = ActionRunner(engine, transcriber, synthesizer, thinker, work, buffer, log)
    return runner, log, Recorder.following(runner)


def test_a_transcriber_that_raises_is_told_aloud_and_logged(tmp_path: Path) -> None:
    runner, log, recorder = make_runner(
        tmp_path,
        NotingTranscriber(raises=RuntimeError("CTranslate2 ran out of memory")),
        EvenSynthesizer(),
        RecordingThinker(),
        Work(False),
    )

    with log:
        speak_question(runner)

    assert recorder.notices == ["Sorry, I could not make out what you said."]
    assert runner.state == "listening"
    assert "failure" in logged_types(tmp_path / "session.jsonl")
    assert runner.buffer.queued_frames > 0  # the notice is on its way to the speaker


def test_a_synthesizer_that_raises_fails_the_turn_and_the_question_stays_open(tmp_path: Path) -> None:
    thinker = RecordingThinker()
    runner, log, recorder = make_runner(tmp_path, Hears(), BrokenSynthesizer(), thinker, Work(False))

    with log:
        speak_question(runner)
        runner.feed(LlmText(1, "Tomorrow starts dry."))
        runner.feed(LlmDone(1))

    assert recorder.turns[1].error == "synthesis"
    assert runner.history()[-1] == UserText("What will the weather be like tomorrow?")
    assert runner.engine.active_turn is None
    assert logged_types(tmp_path / "session.jsonl").count("failure") == 2  # the reply, then the notice


def test_a_chat_model_that_raises_in_its_worker_fails_the_turn(tmp_path: Path) -> None:
    work = Work(threaded=True)
    thinker = ChatModelThinker(BrokenChatModel(), ChatSettings(), work)
    runner, log, recorder = make_runner(tmp_path, Hears(), EvenSynthesizer(), thinker, work)

    with log:
        speak_question(runner)
        work.close()  # waits for the worker: its failure is in the inbox now
        runner.feed_finished_work()

    assert recorder.turns[1].error == "protocol"
    assert recorder.notices == ["Sorry, I could not reach the language model."]
    assert "turn_failed" in logged_types(tmp_path / "session.jsonl")


def test_an_early_transcription_the_user_talked_past_is_abandoned_or_never_runs() -> None:
    vad = ScriptedVad()
    gate = threading.Event()
    transcriber = NotingTranscriber(gate=gate)  # holds every call until the gate opens
    work = Work(threaded=True)
    runner = ActionRunner(
        Engine(vad), transcriber, EvenSynthesizer(), RecordingThinker(), work, PlaybackBuffer(ENGINE_RATE)
    )
    silence = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, 0)

    def tick(*events: VadEvent) -> None:
        vad.next_events = list(events)
        runner.feed(MicAudio(silence))

    tick(VoiceStarted(0))
    for offers in range(1, 4):  # three pauses, each a longer utterance; the user goes on after each
        tick(VoicePaused(offers * BLOCK, AudioBlock(np.zeros(offers * BLOCK, np.float32), ENGINE_RATE, 0)))
        assert transcriber.started.wait(timeout=30)  # the first offer is being transcribed from here on
    first = transcriber.cancels[0]
    assert first is not None
    assert first.cancelled  # the first offer was running when dropped: told to stop
    gate.set()
    answered = work.inbox.get(timeout=30)
    work.close()

    assert answered.utterance == 3  # type: ignore[union-attr]
    assert list(work.drain()) == []  # the abandoned first offer answers nothing
    lengths = [audio.frames for audio in transcriber.audio]
    assert lengths == [BLOCK, 3 * BLOCK]  # the second offer was dropped before it ran


class ScriptedMicrophone:
    """Feeds a runner one silent block per tick with the VAD events scripted for it, keeping the clock."""

    def __init__(self, runner: ActionRunner, vad: ScriptedVad) -> None:
        self.runner = runner
        self.vad = vad
        self.clock = 0

    def tick(self, *events: VadEvent) -> None:
        self.vad.next_events = list(events)
        self.runner.feed(MicAudio(AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, self.clock)))
        self.clock += BLOCK


def test_speech_over_a_reply_is_transcribed_with_care_and_a_question_in_the_quiet_quickly() -> None:
    vad = ScriptedVad()
    transcriber = NotingTranscriber()
    transcriber.queued = ["What will the weather be like tomorrow?"]  # then nothing: the second is a cough
    runner = ActionRunner(
        Engine(vad),
        transcriber,
        EvenSynthesizer(),
        RecordingThinker(),
        Work(threaded=False),
        PlaybackBuffer(ENGINE_RATE),
    )
    mic = ScriptedMicrophone(runner, vad)

    def utterance() -> AudioBlock:
        return AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, mic.clock)

    mic.tick(VoiceStarted(mic.clock))
    mic.tick(VoiceEnded(mic.clock, utterance()))  # the question: a turn starts
    mic.tick(VoiceStarted(mic.clock))
    mic.tick(VoiceEnded(mic.clock, utterance()))  # said while that turn is in flight

    assert transcriber.over_reply == [False, True]


class ServerLikeSynthesizer:
    """Speaks nothing until its call is cancelled, then fails like a remote voice whose call was cut."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.calls: list[tuple[str, CancelToken | None]] = []

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        self.calls.append((text, cancel))
        self.started.set()
        assert cancel is not None
        cancel.wait(timeout=30)
        raise RuntimeError("the connection was shut down")


def test_a_reply_cut_while_its_voice_is_speaking_abandons_the_call_and_skips_queued_chunks() -> None:
    vad = ScriptedVad()
    synthesizer = ServerLikeSynthesizer()
    thinker = RecordingThinker()
    work = Work(threaded=True)
    runner = ActionRunner(Engine(vad), Hears(), synthesizer, thinker, work, PlaybackBuffer(ENGINE_RATE))
    recorder = Recorder.following(runner)
    mic = ScriptedMicrophone(runner, vad)

    def utterance() -> None:
        started = mic.clock
        mic.tick(VoiceStarted(started))
        mic.tick(
            VoiceEnded(mic.clock, AudioBlock(np.zeros(mic.clock - started, np.float32), ENGINE_RATE, started))
        )
        runner.feed(work.inbox.get(timeout=30))  # its transcript

    utterance()
    runner.feed(LlmText(1, "Tomorrow starts dry, then rain moves in. It will be windy, so take a coat."))
    runner.feed(LlmDone(1))
    assert synthesizer.started.wait(timeout=30)
    utterance()  # the user cuts in while the first chunk is still being synthesized
    work.close()

    assert recorder.turns[1].interrupted
    ((text, cancel),) = synthesizer.calls  # the two chunks queued behind it never reached the voice
    assert text == "Tomorrow starts dry,"
    assert cancel is not None
    assert cancel.reason == INTERRUPTED
    assert list(work.drain()) == []  # the cut call reports no failure: the turn is over, not broken
