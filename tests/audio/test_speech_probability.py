"""Silero's ear for a voice: real speech is speech, coughs and knocks are not, and a voice stops the
assistant sooner than webrtcvad alone would let it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.espeak import Speak
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.speech_probability import CHUNK, SileroSpeech
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VadSettings, VoiceActivityDetector, VoiceStarted
from voice.audio.wav import read_wav
from voice.errors import ConfigError, ModelError

AUDIO = Path(__file__).resolve().parents[2] / "audio"
RATE = ENGINE_RATE
LEAD = RATE  # the sound starts one second into the recording


@pytest.fixture(scope="module")
def silero() -> SileroSpeech:
    return SileroSpeech()


def probabilities(model: SileroSpeech, audio: Samples) -> list[float]:
    model.reset()
    return [model.update(audio[start : start + CHUNK]) for start in range(0, len(audio) - CHUNK + 1, CHUNK)]


def in_room(sound: Samples, seconds: float = 3.0) -> Samples:
    signal = (0.002 * np.random.default_rng(1).standard_normal(int(seconds * RATE))).astype(np.float32)
    signal[LEAD : LEAD + len(sound)] += sound[: len(signal) - LEAD]
    return signal


def onset(signal: Samples, model: SileroSpeech | None) -> int | None:
    """Where the barge-in settings first report speech (the clock sample of the block that did), or None."""
    if model is not None:
        model.reset()
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN, speech_model=model)
    for offset in range(0, len(signal), 320):
        block = AudioBlock(signal[offset : offset + 320], RATE, offset)
        if any(isinstance(e, VoiceStarted) for e in detector.process(block, assistant_speaking=True)):
            return block.end
    return None


def test_a_voice_is_speech_and_a_cough_or_knock_is_not(silero: SileroSpeech, speak: Speak) -> None:
    voice = probabilities(silero, in_room(speak("Sorry, I meant on Sunday."), 2.5))
    assert max(voice) > 0.9
    for noise in ("cough.wav", "knock.wav", "click.wav"):
        assert max(probabilities(silero, read_wav(AUDIO / noise).samples)) < 0.5, noise


def test_samples_may_come_in_any_block_size(silero: SileroSpeech, speak: Speak) -> None:
    audio = in_room(speak("Wait, stop."), 2.0)
    whole = probabilities(silero, audio)
    silero.reset()
    odd = [silero.update(audio[start : start + 333]) for start in range(0, len(audio), 333)]
    assert odd[-1] == pytest.approx(whole[-1], abs=1e-5)


def test_a_voice_over_the_reply_is_caught_sooner_with_silero(silero: SileroSpeech, speak: Speak) -> None:
    savings = []
    for text in ("Sorry, I meant on Sunday.", "Wait, stop.", "Hold on, that is not right."):
        signal = in_room(speak(text))
        with_model, without = onset(signal, silero), onset(signal, None)
        assert with_model is not None
        assert without is not None
        savings.append(without - with_model)
    assert min(savings) > 0, savings  # a soft "s" takes Silero longest to call speech
    assert sum(savings) / len(savings) >= 40 * RATE // 1000, savings


@pytest.mark.parametrize("noise", ["cough.wav", "knock.wav", "click.wav"])
def test_a_cough_or_knock_is_never_caught_sooner(silero: SileroSpeech, noise: str) -> None:
    signal = in_room(read_wav(AUDIO / noise).samples)
    assert onset(signal, silero) == onset(signal, None)


class Verdict:
    """A speech model that always says the same."""

    def __init__(self, probability: float) -> None:
        self.probability = probability

    def update(self, samples: Samples) -> float:
        return self.probability

    def reset(self) -> None:
        pass


def test_the_quick_start_needs_the_model_to_hear_speech(speak: Speak) -> None:
    signal = in_room(speak("Sorry, I meant on Sunday."))
    sure, unsure = onset(signal, Verdict(0.9)), onset(signal, Verdict(0.4))  # type: ignore[arg-type]
    assert sure is not None
    assert unsure is not None
    quick_saving = (DEFAULT_BARGE_IN.start_voiced_ms - (DEFAULT_BARGE_IN.quick_voiced_ms or 0)) * RATE // 1000
    assert unsure - sure == quick_saving
    assert unsure == onset(signal, None)


class Flicker(Verdict):
    """Calls one frame in three speech: a clatter or a laugh on the radio, not a voice."""

    def __init__(self) -> None:
        super().__init__(0.1)
        self.frames = 0

    def update(self, samples: Samples) -> float:
        self.frames += 1
        return 0.9 if self.frames % 3 == 0 else 0.1


def test_the_quick_start_needs_speech_in_every_frame_of_its_window(speak: Speak) -> None:
    """A sound the model calls speech only now and then stops the reply no sooner than webrtcvad alone."""
    signal = in_room(speak("Sorry, I meant on Sunday."))

    assert onset(signal, Flicker()) == onset(signal, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("quick", [0, 160, 200])
def test_the_quick_start_must_need_less_than_the_usual_one(quick: int) -> None:
    with pytest.raises(ConfigError):
        VadSettings(start_voiced_ms=160, start_window_ms=240, quick_voiced_ms=quick)


class Counting(Verdict):
    """Counts the samples it is fed."""

    def __init__(self) -> None:
        super().__init__(0.9)
        self.fed = 0

    def update(self, samples: Samples) -> float:
        self.fed += len(samples)
        return super().update(samples)


def test_the_speech_model_runs_only_while_the_assistant_speaks(speak: Speak) -> None:
    model = Counting()
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN, speech_model=model)
    signal = in_room(speak("Wait, stop."))
    half = len(signal) // 2 // 320 * 320
    for offset in range(0, half, 320):
        detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), assistant_speaking=False)
    assert model.fed == 0  # an idle assistant does not pay for it
    for offset in range(half, len(signal), 320):
        detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), assistant_speaking=True)
    assert model.fed == len(signal) - half


def test_a_file_that_is_not_the_model_is_a_model_error(tmp_path: Path) -> None:
    broken = tmp_path / "silero.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot load Silero VAD model"):
        SileroSpeech(broken)


LOUD = 0.3  # a voice this loud sets the stand-in model below; the cough stays under it


class Latching(Verdict):
    """Calls speech from the first loud voice it hears until reset: a recurrent net's state, caricatured."""

    def __init__(self) -> None:
        super().__init__(0.1)

    def reset(self) -> None:
        self.probability = 0.1

    def update(self, samples: Samples) -> float:
        if len(samples) and float(np.max(np.abs(samples))) > LOUD:
            self.probability = 0.9
        return self.probability


def test_each_reply_starts_the_speech_model_afresh(speak: Speak) -> None:
    """The user's voice over one reply does not make a cough over the next one stop it sooner."""
    voice = in_room(speak("Wait, stop."))
    assert float(np.max(np.abs(voice))) > LOUD
    cough = read_wav(AUDIO / "cough.wav").samples
    cough = in_room(cough * (0.8 * LOUD / float(np.max(np.abs(cough)))))
    between = np.zeros(2 * RATE, np.float32)  # the assistant listens: the user's utterance ends
    signal = np.concatenate((voice, between, cough))
    speaking = np.concatenate((np.ones(len(voice)), np.zeros(len(between)), np.ones(len(cough)))) > 0

    def cough_onset(model: Latching | None) -> int | None:
        detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN, speech_model=model)
        found = None
        for offset in range(0, len(signal), 320):
            block = AudioBlock(signal[offset : offset + 320], RATE, offset)
            events = detector.process(block, assistant_speaking=bool(speaking[offset]))
            if offset >= len(voice) + len(between) and any(isinstance(e, VoiceStarted) for e in events):
                found = found or block.end
        return found

    alone = cough_onset(None)
    assert alone is not None  # webrtcvad calls the cough speech: the model may only not hasten it
    assert cough_onset(Latching()) == alone
