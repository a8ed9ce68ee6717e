"""models.txt tells the truth about the bundled models: their files are installed and their sha256 matches."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from voice.asr.whisper import bundled_model_dir
from voice.audio import speech_probability
from voice.llm.embedded import bundled_gguf
from voice.tts.piper_voice import bundled_voice_path
from voice.turn_end.smart_turn import bundled_model_path

MODELS_TXT = Path(__file__).resolve().parents[1] / "models.txt"


def entries() -> dict[str, list[str]]:
    lines = [
        line for line in MODELS_TXT.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    return {fields[0]: fields for fields in (line.split(" | ") for line in lines)}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def test_every_line_has_the_six_fields() -> None:
    assert all(len(fields) == 6 for fields in entries().values())


@pytest.mark.parametrize(
    ("name", "installed"),
    [
        ("whisper-tiny.en-int8", lambda: bundled_model_dir() / "model.bin"),
        ("piper-en_US-joe-medium", bundled_voice_path),
        ("smollm2-135m-instruct-q4_1", bundled_gguf),
        ("smart-turn-v3.2-cpu", bundled_model_path),
        ("silero-vad-v6", speech_probability.bundled_model_path),
    ],
)
def test_bundled_model_matches_its_recorded_sha256(name: str, installed: Callable[[], Path]) -> None:
    assert sha256(installed()) == entries()[name][4]
