"""Asleep and awake on the sample clock, and the wake word left out of what is transcribed (pure parts)."""

from __future__ import annotations

import numpy as np

from voice.asr.port import TimedWord, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.wake.phrase import WakeWordsDropped, without_wake_words
from voice.wake.port import WakeDetection
from voice.wake.watch import WakeWatch

BLOCK = 640


class WordAt:
    """A stand-in detector that hears its word at the samples it was told (a unit test's fake)."""

    name = "okay_nabu"
    phrase = "Okay Nabu"

    def __init__(self, *samples: int) -> None:
        self._at = list(samples)

    def hear(self, block: AudioBlock) -> WakeDetection | None:
        hits = [s for s in self._at if block.start < s <= block.end]
        return WakeDetection(self.name, hits[0]) if hits else None

    def close(self) -> None:
        pass


def loud(start: int) -> AudioBlock:
    return AudioBlock(np.full(BLOCK, 0.5, np.float32), ENGINE_RATE, start)


def test_asleep_the_engine_hears_silence_and_from_the_wake_word_on_the_mic() -> None:
    watch = WakeWatch(WordAt(BLOCK + 100), awake_for=ENGINE_RATE)
    first = watch.hear(loud(0))
    assert watch.asleep
    assert not first.block.samples.any()
    woken = watch.hear(loud(BLOCK))
    assert woken.woke
    assert not watch.asleep
    assert not woken.block.samples[:100].any()
    assert woken.block.samples[100:].all()
    assert watch.hear(loud(2 * BLOCK)).block.samples.all()


def test_it_sleeps_after_the_quiet_time_only_while_the_engine_is_idle() -> None:
    watch = WakeWatch(WordAt(100), awake_for=10 * BLOCK)
    watch.hear(loud(0))
    watch.engine_state("thinking", BLOCK)  # a reply on its way: no quiet time runs
    for index in range(1, 30):
        assert not watch.hear(loud(index * BLOCK)).slept
    watch.engine_state("listening", 30 * BLOCK)
    slept = [watch.hear(loud(index * BLOCK)).slept for index in range(30, 45)]
    assert slept.index(True) == 9  # ten blocks of quiet after the reply ended
    assert watch.asleep


def test_anything_the_engine_does_while_asleep_wakes_it() -> None:
    watch = WakeWatch(WordAt(), awake_for=ENGINE_RATE)
    watch.engine_state("thinking", 0)  # typed input
    assert not watch.asleep


def test_the_wake_word_s_words_leave_the_transcript_however_whisper_spells_them() -> None:
    assert without_wake_words("Okay Nabu, what's the time?", "Okay Nabu") == "What's the time?"
    assert without_wake_words("OK, Nabu. what's the time?", "Okay Nabu") == "What's the time?"
    assert without_wake_words("Okay, what's the time?", "Okay Nabu") == "Okay, what's the time?"
    assert without_wake_words("Alexa, stop.", "Alexa") == "Stop."


class Echoing:
    """A stand-in recogniser that says how long the audio it got was, with one timed word."""

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        return Transcript(f"{audio.frames}", (TimedWord(f"{audio.frames}", 0.0, 0.1),))


def test_the_audio_up_to_the_wake_word_is_not_transcribed_and_word_times_stay_put() -> None:
    dropped = WakeWordsDropped(Echoing(), "Okay Nabu", lambda: 1000 + 8000)
    heard = dropped.transcribe(AudioBlock(np.zeros(16000, np.float32), ENGINE_RATE, 1000), word_timings=True)
    assert heard.text == "8000"
    assert heard.words[0].start_s == 0.5  # where it is in the audio the engine asked about
    alone = dropped.transcribe(AudioBlock(np.zeros(8100, np.float32), ENGINE_RATE, 1000))
    assert alone.text == ""  # nothing but the wake word
