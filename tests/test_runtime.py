"""The action runner between the engine and the heavy parts: how reply audio is counted as heard.

Whisper, piper and the LLM are stand-ins here (their real runs are in tests/sim); the engine, the VAD,
the playback buffer and the runner are the real ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voice.asr.port import Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.audio.wav import read_wav
from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall
from voice.engine.engine import Engine
from voice.engine.events import LlmDone, LlmFailed, LlmText, MicAudio
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.runtime import ActionRunner, Work
from voice.tts.port import Synthesis, WordTiming

AUDIO = Path(__file__).resolve().parents[1] / "audio"
WORD = 4_000  # each stand-in word sounds for a quarter of a second
BLOCK = 320


class OneAnswerTranscriber:
    def transcribe(self, audio: AudioBlock, *, word_timings: bool = False) -> Transcript:
        return Transcript("What will the weather be like tomorrow?")


class EvenSynthesizer:
    """Every word gets WORD samples of a tone, so what was played is easy to count."""

    def synthesize(self, text: str) -> Synthesis:
        words = text.split()
        tone = np.full(len(words) * WORD, 0.1, dtype=np.float32)
        timings = tuple(WordTiming(w, i * WORD, (i + 1) * WORD) for i, w in enumerate(words))
        return Synthesis(AudioBlock(tone, ENGINE_RATE), timings)


class RecordingThinker:
    def __init__(self) -> None:
        self.sent: list[Request] = []

    def send(self, request: Request, delay_s: float) -> None:
        self.sent.append(request)

    def cancel(self, turn: int) -> None:
        pass

    def run_tool(self, turn: int, call: ToolCall) -> None:
        raise AssertionError("no tool is called here")


def test_a_retried_reply_is_counted_from_its_own_first_sample() -> None:
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    thinker = RecordingThinker()
    buffer = PlaybackBuffer(ENGINE_RATE)
    runner = ActionRunner(engine, OneAnswerTranscriber(), EvenSynthesizer(), thinker, Work(False), buffer)
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

    assert engine.turns[0].spoken == "Hello there,"
