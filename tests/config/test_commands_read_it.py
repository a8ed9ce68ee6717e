"""The commands that run the assistant take their settings from the file: a real `voice kiosk`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.kiosk import Kiosk


def test_voice_kiosk_listens_as_its_config_file_says(tmp_path: Path) -> None:
    sessions = tmp_path / "visits"
    config = tmp_path / "kiosk.toml"
    config.write_text(
        f'[kiosk]\nport = 0\naudio = "none"\nsessions = "{sessions}"\nkeep_sessions = 5\n'
        '[llm]\nurl = "http://127.0.0.1:9/v1"\nmodel = "unused"\n'
    )
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "voice", "kiosk", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environ,
    )
    kiosk = Kiosk(process, sessions)
    try:
        assert f"(audio none; session logs in {sessions})" in kiosk.output()
        assert kiosk.port != 8765
    finally:
        assert kiosk.stop() == 0, kiosk.output()


def test_voice_kiosk_with_a_bad_config_file_stops_before_it_starts(tmp_path: Path) -> None:
    config = tmp_path / "kiosk.toml"
    config.write_text('[kiosk]\naudio = "loud"\n')

    result = subprocess.run(
        [sys.executable, "-m", "voice", "kiosk", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert result.stderr == (
        f'voice: error: {config}: kiosk.audio must be one of device, none, websocket, not "loud"\n'
    )
