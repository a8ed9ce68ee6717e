"""The conversation's speaker: enrolled by the first stretch, followed as it goes on, forgotten at a reset;
on real recordings, the speaker's other clips score above every other voice's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.errors import AudioError
from voice.speaker.encoder import SpeakerEncoder
from voice.speaker.voiceprint import SAME_SPEAKER, SpeakerScore, Voiceprint

Array = np.ndarray[Any, np.dtype[np.float32]]
REAL = AUDIO / "real"
A = np.array([1.0, 0.0, 0.0], np.float32)
B = np.array([0.0, 1.0, 0.0], np.float32)


def voice_of(direction: Array) -> Array:
    """Samples a stand-in embedder reads back as ``direction``: the first three samples carry it."""
    samples = np.zeros(ENGINE_RATE, np.float32)
    samples[:3] = direction
    return samples


def stand_in_embed(samples: Array) -> Array | None:
    return None if not samples[:3].any() else np.asarray(samples[:3], np.float32)


def test_nobody_is_the_speaker_until_a_stretch_with_voice_enrolls_one() -> None:
    voiceprint = Voiceprint(stand_in_embed)
    assert voiceprint.score(voice_of(A)) == SpeakerScore(None, 1.0)
    assert not voiceprint.add(np.zeros(ENGINE_RATE, np.float32))  # too little voice: nobody enrolled
    assert not voiceprint.enrolled
    assert voiceprint.add(voice_of(A))
    assert voiceprint.score(voice_of(A)).is_speaker() is True
    assert voiceprint.score(voice_of(B)).is_speaker() is False
    assert voiceprint.score(np.zeros(ENGINE_RATE, np.float32)).is_speaker() is None


def test_the_print_follows_the_voice_and_forgets_what_is_older_than_its_memory() -> None:
    voiceprint = Voiceprint(stand_in_embed, memory_s=10.0)
    for _ in range(10):
        voiceprint.add(voice_of(A))
    for _ in range(20):
        voiceprint.add(voice_of(B))
    assert voiceprint.seconds == pytest.approx(10.0)
    a, b = voiceprint.similarity(A), voiceprint.similarity(B)
    assert a is not None
    assert b is not None
    assert b > 0.95 > 0.3 > a  # 20 s of B after 10 s of A, remembering 10 s: A has all but faded


def test_a_reset_lets_the_next_voice_enroll() -> None:
    voiceprint = Voiceprint(stand_in_embed)
    voiceprint.add(voice_of(A))
    voiceprint.reset()
    assert not voiceprint.enrolled
    assert voiceprint.seconds == 0
    voiceprint.add(voice_of(B))
    assert voiceprint.score(voice_of(B)).is_speaker() is True
    assert voiceprint.score(voice_of(A)).is_speaker() is False


@pytest.fixture(scope="module")
def encoder() -> SpeakerEncoder:
    return SpeakerEncoder()


def clips(prefix: str) -> list[Array]:
    return [read_wav(path).samples for path in sorted(REAL.glob(f"{prefix}*.wav"))]


@pytest.mark.models
@pytest.mark.parametrize("speaker", ["austen", "cards", "beckett"])
def test_the_speaker_s_other_clips_outscore_every_other_voice(encoder: SpeakerEncoder, speaker: str) -> None:
    voiceprint = Voiceprint(encoder.embed)
    first, *rest = clips(speaker)
    assert voiceprint.add(first)  # the first question
    own = [voiceprint.score(clip).similarity for clip in rest]
    others = [
        voiceprint.score(clip).similarity
        for prefix in ("austen", "cards", "beckett", "two_cities")
        if prefix != speaker
        for clip in clips(prefix)
    ]
    assert None not in own
    assert None not in others
    assert min(own) > max(others)  # type: ignore[type-var]
    assert min(own) >= SAME_SPEAKER - 0.05  # type: ignore[operator]


@pytest.mark.models
def test_silence_or_a_word_too_short_gives_no_verdict_and_a_block_must_be_16_khz_mono(
    encoder: SpeakerEncoder,
) -> None:
    assert encoder.embed(np.zeros(2 * ENGINE_RATE, np.float32)) is None
    speech = read_wav(REAL / "cards_1.wav").samples
    assert encoder.embed(speech) is not None
    assert encoder.embed(speech[: ENGINE_RATE // 5]) is None  # 200 ms: under MIN_VOICED_S
    with pytest.raises(AudioError, match="mono 16000 Hz"):
        encoder.embed_block(AudioBlock(np.zeros(4_800, np.float32), 48_000))


@pytest.mark.models
def test_numpy_and_onnx_give_one_embedding_of_real_speech() -> None:
    speech = read_wav(REAL / "austen_880.wav").samples
    onnx, numpy = SpeakerEncoder().embed(speech), SpeakerEncoder(network="numpy").embed(speech)
    assert onnx is not None
    assert numpy is not None
    np.testing.assert_allclose(onnx, numpy, atol=1e-4)
