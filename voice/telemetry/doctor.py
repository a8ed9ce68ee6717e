"""`voice doctor`'s measurements: what a turn's end and a reply's first audio cost on this machine.

The decision is measured the way the engine asks for it: the demo's question, cut by the engine's own VAD
where it offers the utterance at the short pause, handed to whisper (behind the word guard, as the
assistant hears) and to Smart Turn at once, each on its worker of the runtime's ``Work``. Piper's first
audio is the first chunk the reply chunker hands out of a typical answer. Medians of a few rounds after
one to warm up; the machine may be shared, so the figures are rough.
"""

from __future__ import annotations

import os
import queue
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.speech_probability import SileroSpeech
from voice.audio.vad import DEFAULT_BARGE_IN, VoiceActivityDetector, VoicePaused
from voice.audio.wav import read_wav
from voice.components import SpeechModels, quiet_vad
from voice.config.settings import Settings
from voice.engine.hold import Eagerness
from voice.engine.inputs import EngineInput, TranscriptFailed, TranscriptReady, TurnEndJudged
from voice.errors import ModelError, VoiceError
from voice.runtime import Work
from voice.telemetry.expected_turns import Costs
from voice.tts.chunker import SpeechChunker

QUESTION_WAV = "what-weather.wav"  # "What will the weather be like tomorrow?", shipped for `voice demo`
REPLY = "Tomorrow looks sunny, with a high of twenty-one degrees and a light breeze in the afternoon."
BLOCK = ENGINE_RATE // 50  # 20 ms mic blocks, as the drivers hand them over
TAIL_S = 1.0  # silence after the question, so the VAD reaches its pause
WAIT_S = 120.0  # a model that takes longer than this for one short question is broken, not slow
SMALLEST_WHISPER = "tiny"
REST_S = 0.5  # between the blocks of rounds, for the last model's threads to go idle


@dataclass(frozen=True)
class Measured:
    """The medians, what the models made of the question and the reply, and how many rounds were timed."""

    costs: Costs
    heard: str
    probability: float
    first_chunk: str
    rounds: int

    def as_json(self) -> dict[str, Any]:
        costs = self.costs
        return {
            "rounds": self.rounds,
            "whisper_ms": round(costs.whisper_ms),
            "smart_turn_ms": round(costs.smart_turn_ms),
            "whisper_beside_smart_turn_ms": round(costs.whisper_beside_ms),
            "decision_ms": round(costs.decision_ms),
            "first_audio_ms": round(costs.first_audio_ms),
            "heard": self.heard,
            "smart_turn_probability": round(self.probability, 3),
            "first_chunk": self.first_chunk,
        }


def question_at_pause(eagerness: Eagerness) -> AudioBlock:
    """The demo's question as the engine offers it to whisper and Smart Turn at the short pause."""
    spoken = read_wav(Path(str(resources.files("voice.sim") / "demo" / QUESTION_WAV)))
    samples = np.concatenate((spoken.samples, np.zeros(int(TAIL_S * ENGINE_RATE), dtype=np.float32)))
    vad = VoiceActivityDetector(quiet_vad(eagerness), DEFAULT_BARGE_IN, speech_model=SileroSpeech())
    for start in range(0, len(samples) - BLOCK + 1, BLOCK):
        for event in vad.process(AudioBlock(samples[start : start + BLOCK], ENGINE_RATE, start), False):
            if isinstance(event, VoicePaused):
                return event.utterance
    raise VoiceError(f"the VAD heard no pause after {QUESTION_WAV}: is the install whole?")


def measure(models: SpeechModels, settings: Settings, rounds: int) -> Measured:
    """Time whisper and Smart Turn alone and together on the question, and piper's first audio.

    Each in its own block of rounds, after a rest, so no model is timed beside another's threads still busy
    from its call (interleaved, Smart Turn read twice its cost here).
    """
    judge = models.end_of_turn
    if judge is None:
        raise ModelError("voice doctor needs the end-of-turn model (Smart Turn)")
    audio = question_at_pause(settings.eagerness)
    first_chunk = (SpeechChunker().feed(REPLY) or [REPLY])[0]
    whisper_ms, heard = _median_ms(lambda: models.transcriber.transcribe(audio).text, rounds)
    smart_turn_ms, probability = _median_ms(lambda: judge.probability_complete(audio), rounds)
    work = Work(threaded=True)
    try:
        time.sleep(REST_S)
        decisions = [_decision(work, models, audio) for _ in range(rounds + 1)][1:]  # the first warms up
    finally:
        work.close()
    first_audio_ms, _ = _median_ms(lambda: models.synthesizer.synthesize(first_chunk), rounds)
    asr, smaller = _asr_named(settings)
    costs = Costs(
        whisper_ms=whisper_ms,
        smart_turn_ms=smart_turn_ms,
        whisper_beside_ms=statistics.median(asr_s for asr_s, _ in decisions) * 1000,
        decision_ms=statistics.median(both_s for _, both_s in decisions) * 1000,
        first_audio_ms=first_audio_ms,
        asr=asr,
        asr_is_server=settings.asr_url is not None,
        smaller_asr=smaller,
    )
    return Measured(costs, heard, probability, first_chunk, rounds)


def _median_ms(action: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """``action`` once to warm up, then ``rounds`` times: the median milliseconds and its last result."""
    time.sleep(REST_S)
    result = action()
    took = []
    for _ in range(rounds):
        seconds, result = _timed(action)
        took.append(seconds * 1000)
    return statistics.median(took), result


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system keeps none)."""
    try:
        return [round(load, 2) for load in os.getloadavg()]
    except (OSError, AttributeError):  # AttributeError: Windows has no getloadavg
        return None


class _Seconds:
    """A watcher of ``Work``: the seconds from asking to the answer, by kind of work."""

    def __init__(self) -> None:
        self.by_kind: dict[str, float] = {}

    def produced(self, kind: str, event: EngineInput, seconds: float) -> None:
        self.by_kind[kind] = seconds


def _decision(work: Work, models: SpeechModels, audio: AudioBlock) -> tuple[float, float]:
    """Whisper and Smart Turn asked at once on their workers, as at a pause: (whisper's seconds, both's)."""
    judge = models.end_of_turn
    assert judge is not None
    failures: list[Exception] = []

    def failed(exc: Exception) -> list[EngineInput]:
        failures.append(exc)
        return [TranscriptFailed(0, str(exc))]  # an answer all the same: the wait below ends

    seconds = _Seconds()
    work.watchers[:] = [seconds]
    work.run("asr", lambda: [TranscriptReady(0, models.transcriber.transcribe(audio).text)], failed)
    work.run("turn-end", lambda: [TurnEndJudged(0, judge.probability_complete(audio))], failed)
    for _ in range(2):
        try:
            work.inbox.get(timeout=WAIT_S)
        except queue.Empty:
            raise ModelError(f"whisper and Smart Turn gave no answer within {WAIT_S:.0f} s") from None
    if failures:
        raise ModelError(f"a model failed on the question: {failures[0]}") from failures[0]
    return seconds.by_kind["asr"], max(seconds.by_kind.values())


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def _asr_named(settings: Settings) -> tuple[str, str | None]:
    """What hears the user, as a user names it, and a smaller local model to suggest (None: none is)."""
    if settings.asr_url is not None:
        return settings.asr_url, None
    if settings.asr_model is None:
        return "tiny.en (bundled)", None
    smaller = None if SMALLEST_WHISPER in settings.asr_model else "whisper-tiny.en-int8"
    return settings.asr_model, smaller
