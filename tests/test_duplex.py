"""The driver core: a reply's audio is stamped heard when its samples left the output plus its latency.

The engine, VAD, runner and playback buffer are real; the speaker is a stand-in with a chosen latency
whose output clock runs ahead of the mic's, as a sound card's may.
"""

from __future__ import annotations

import numpy as np

from tests.support.paths import AUDIO
from tests.support.room import BLOCK
from tests.support.stand_ins import RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo_reference import EchoReference
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.audio.wav import read_wav
from voice.duplex import Duplex, EchoPath
from voice.engine.engine import Engine
from voice.engine.inputs import LlmDone, LlmText
from voice.recorder import Recorder
from voice.runtime import ActionRunner, Work
from voice.testing.stand_ins import EvenSynthesizer, Hears

OUTPUT_START = 48_000  # the speaker's clock started three seconds before the mic's
LATENCY = 960


class PullingSpeaker:
    """Pulls one block per mic block, as a sound card's callback would; heard LATENCY samples later."""

    def __init__(self, buffer: PlaybackBuffer) -> None:
        self.buffer = buffer
        self.underflows = 0
        self.latency_samples = LATENCY
        self.first_sound: int | None = None

    @property
    def position(self) -> int:
        return self.buffer.position

    def pull(self) -> None:
        start = self.buffer.position
        if self.buffer.pull(BLOCK).any() and self.first_sound is None:
            self.first_sound = start

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


class SilentMicrophone:
    overflows = 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_engine_hears_the_reply_on_the_output_clock_latency_included() -> None:
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    thinker = RecordingThinker()
    buffer = PlaybackBuffer(ENGINE_RATE, start=OUTPUT_START)
    runner = ActionRunner(engine, Hears(), EvenSynthesizer(), thinker, Work(False), buffer)
    recorder = Recorder.following(runner)
    duplex = Duplex(runner, EchoPath(None, EchoReference()))
    mic, speaker = SilentMicrophone(), PullingSpeaker(buffer)
    question = np.concatenate(
        (read_wav(AUDIO / "what-weather.wav").samples, np.zeros(ENGINE_RATE, np.float32))
    )
    clock = 0

    def step(samples: np.ndarray) -> None:
        nonlocal clock
        speaker.pull()
        duplex.step(AudioBlock(samples, ENGINE_RATE, clock), mic, speaker)
        clock += BLOCK

    for start in range(0, len(question) - BLOCK, BLOCK):
        step(question[start : start + BLOCK])
    (request,) = thinker.sent
    for word in ["Dry", " and", " bright."]:
        runner.feed(LlmText(request.turn, word))
    runner.feed(LlmDone(request.turn))
    for _ in range(3 * 4_000 // BLOCK + LATENCY // BLOCK + 2):
        step(np.zeros(BLOCK, np.float32))

    (turn,) = recorder.answered()
    assert speaker.first_sound is not None
    assert turn.spoken == "Dry and bright."
    assert turn.audio_start_s == seconds(speaker.first_sound + LATENCY)
    assert turn.audio_end_s == seconds(speaker.first_sound + 3 * 4_000 + LATENCY)


def seconds(sample: int) -> float:
    return round(sample / ENGINE_RATE, 3)
