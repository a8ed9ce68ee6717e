"""`voice demo`, the newcomer's first command: real whisper, piper and the embedded llama.cpp model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.models
def test_demo_interrupts_the_assistant_and_carries_what_was_heard(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "voice", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert result.returncode == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    first, second = report["turns"][0], report["turns"][1]
    assert first["interrupted"]
    assert first["spoken"]
    assert first["reply"].startswith(first["spoken"])
    assert {"role": "assistant", "text": first["spoken"], "interrupted": True} in second["request"]
    assert second["request"][-1] == {"role": "user", "text": "Sorry, I meant on Sunday."}
    assert f"assistant (interrupted): {first['spoken']}" in result.stdout
    assert "cut at" in result.stdout
    assert (out / "conversation.wav").stat().st_size > 100_000


def test_demo_refuses_to_overwrite_an_earlier_run(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{}")

    result = subprocess.run(
        [sys.executable, "-m", "voice", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "already holds report.json" in result.stderr
    assert (tmp_path / "report.json").read_text() == "{}"
