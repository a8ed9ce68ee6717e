"""The bundled microWakeWord models on real speech: each hears its own word, said by voices it was not
tuned on, near where the word ends, and none of the others' words nor the question without it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.wake_words import QUESTION, SAID, espeak_says, piper_says
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.tts.piper_voice import PiperSynthesizer
from voice.wake.micro import MicroWakeDetector
from voice.wake.models import bundled_wake_models, wake_model
from voice.wake.port import WakeDetection

BLOCK = 640  # 40 ms, as the drivers hand the engine


def detections(name: str, samples: Samples, block: int = BLOCK) -> list[WakeDetection]:
    detector = MicroWakeDetector(wake_model(name).config)
    found = []
    for start in range(0, len(samples), block):
        heard = detector.hear(AudioBlock(samples[start : start + block], ENGINE_RATE, start))
        if heard is not None:
            found.append(heard)
    detector.close()
    return found


def test_the_four_bundled_models_are_listed_with_their_words() -> None:
    models = {model.name: model.phrase for model in bundled_wake_models()}
    assert models == SAID


@pytest.mark.models
@pytest.mark.parametrize("name", sorted(SAID))
def test_each_model_hears_its_word_in_piper_s_voice_once_where_the_word_ends(
    name: str, synthesizer: PiperSynthesizer
) -> None:
    said = synthesizer.synthesize(f"{SAID[name]}, {QUESTION}")
    last_wake_word = said.words[len(SAID[name].split()) - 1]
    samples = np.concatenate([np.zeros(ENGINE_RATE // 2, np.float32), said.audio.samples])
    found = detections(name, samples)
    assert [d.name for d in found] == [name]
    word_end = ENGINE_RATE // 2 + last_wake_word.end
    question_start = ENGINE_RATE // 2 + said.words[len(SAID[name].split())].start
    assert word_end - 0.15 * ENGINE_RATE <= found[0].sample < question_start  # before the question begins


@pytest.mark.models
@pytest.mark.parametrize("name", sorted(SAID))
def test_no_model_hears_the_question_or_the_other_wake_words(
    name: str, synthesizer: PiperSynthesizer
) -> None:
    others = [piper_says(synthesizer, f"{SAID[other]}, {QUESTION}") for other in SAID if other != name]
    plain = piper_says(synthesizer, f"Okay, {QUESTION}")
    assert detections(name, np.concatenate([plain, *others])) == []


@pytest.mark.models
@pytest.mark.parametrize(
    ("name", "voice"),
    [("okay_nabu", "en-gb-x-rp"), ("okay_nabu", "en-us"), ("hey_mycroft", "en+f3"), ("alexa", "en")],
)
def test_espeak_voices_wake_the_models_that_hear_them(name: str, voice: str) -> None:
    assert [d.name for d in detections(name, espeak_says(f"{SAID[name]}, {QUESTION}", voice))] == [name]


@pytest.mark.models
def test_a_detection_does_not_depend_on_how_the_audio_is_cut_into_blocks(
    synthesizer: PiperSynthesizer,
) -> None:
    samples = piper_says(synthesizer, f"Okay Nabu, {QUESTION}")
    by_40_ms = detections("okay_nabu", samples)
    by_400_ms = detections("okay_nabu", samples, block=6400)  # the drivers' idle batches
    assert [d.sample for d in by_40_ms] == [d.sample for d in by_400_ms]
