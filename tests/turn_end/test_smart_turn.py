"""Smart Turn on our fixtures: a finished question reads as complete, one cut mid-sentence does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.errors import AudioError, ModelError
from voice.turn_end.smart_turn import SmartTurn

AUDIO = Path(__file__).resolve().parents[2] / "audio"
PAUSE = np.zeros(ENGINE_RATE // 5, np.float32)  # the 200 ms of silence after which the engine asks


@pytest.fixture(scope="module")
def smart_turn() -> SmartTurn:
    return SmartTurn()


def said_until(name: str, cut_s: float | None = None) -> AudioBlock:
    """A fixture up to ``cut_s`` (all of it when None), then a short silence: what the engine hands over."""
    samples = read_wav(AUDIO / name).samples
    speech = samples if cut_s is None else samples[: round(cut_s * ENGINE_RATE)]
    return AudioBlock(np.concatenate((speech, PAUSE)), ENGINE_RATE)


@pytest.mark.parametrize("name", ["check-sunday.wav", "fox-story.wav", "hello-there.wav"])
def test_a_finished_sentence_is_complete(smart_turn: SmartTurn, name: str) -> None:
    assert smart_turn.probability_complete(said_until(name)) > 0.5


@pytest.mark.parametrize(
    ("name", "cut_s"),
    [("check-sunday.wav", 1.88), ("what-weather.wav", 1.74)],
    ids=["can-you-check-the-forecast-for", "what-will-the-weather-be-like"],
)
def test_a_sentence_cut_before_its_last_word_is_not_complete(
    smart_turn: SmartTurn, name: str, cut_s: float
) -> None:
    assert smart_turn.probability_complete(said_until(name, cut_s)) < 0.5


def test_only_the_last_eight_seconds_count(smart_turn: SmartTurn) -> None:
    """Ten seconds of earlier talk in front change nothing: the judgement stays on the latest words."""
    question = said_until("check-sunday.wav")
    chatter = read_wav(AUDIO / "fox-story.wav").samples
    long = AudioBlock(np.concatenate((np.tile(chatter, 4), question.samples)), ENGINE_RATE)

    assert smart_turn.probability_complete(long) == pytest.approx(
        smart_turn.probability_complete(question), abs=0.02
    )


def test_a_file_that_is_not_the_model_is_refused(tmp_path: Path) -> None:
    not_a_model = tmp_path / "smart-turn.onnx"
    not_a_model.write_bytes(b"not an ONNX graph")
    with pytest.raises(ModelError, match="cannot load Smart Turn model"):
        SmartTurn(not_a_model)


def test_audio_at_another_rate_is_refused(smart_turn: SmartTurn) -> None:
    with pytest.raises(AudioError, match="16000 Hz"):
        smart_turn.probability_complete(AudioBlock(np.zeros(4_800, np.float32), 48_000))
