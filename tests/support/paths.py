"""Where the repository's recorded fixtures are."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AUDIO = ROOT / "audio"  # the WAV fixtures and their manifest
SCENARIOS = sorted((AUDIO / "scenarios").glob("*.json"))
