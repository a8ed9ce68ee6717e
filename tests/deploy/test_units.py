"""The deploy/ units are valid systemd units, and the kiosk's URLs name the ports the box serves on."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from voice.testing.deploy_units import DEPLOY, unit_command

NO_CHANGE: dict[str, str] = {}


def box_port(unit: str) -> str:
    argv = unit_command(unit, NO_CHANGE).argv
    if "--uri" in argv:
        return argv[argv.index("--uri") + 1].rsplit(":", 1)[1]
    return argv[argv.index("--port") + 1]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze (apt systemd)")
def test_systemd_accepts_every_unit(tmp_path: Path) -> None:
    # systemd checks that each command exists: point them at this machine's virtualenv.
    for unit in DEPLOY.glob("voice-*"):
        text = unit.read_text(encoding="utf-8").replace("/opt/voice/.venv", sys.prefix)
        (tmp_path / unit.name.replace("@.", "@8765.")).write_text(text, encoding="utf-8")
    units = sorted(str(path) for path in tmp_path.iterdir())
    verify = ["systemd-analyze", "verify", *units]
    checked = subprocess.run(verify, capture_output=True, text=True, cwd=tmp_path)
    assert (checked.returncode, checked.stdout + checked.stderr) == (0, "")


def test_the_kiosk_template_points_at_the_ports_the_box_serves_on() -> None:
    argv = unit_command("voice-kiosk@.service", NO_CHANGE, {"MODEL_BOX": "box.example"}, instance="8766").argv
    flags = dict(zip(argv[2::2], argv[3::2], strict=True))
    assert argv[1:3] == ["kiosk", "--audio"]
    assert flags["--port"] == "8766"
    assert flags["--asr"] == f"wyoming://box.example:{box_port('voice-box-asr.service')}"
    assert flags["--tts"] == f"wyoming://box.example:{box_port('voice-box-tts.service')}"
    assert flags["--llm-url"] == f"http://box.example:{box_port('voice-box-llm.service')}/v1"
    llm = unit_command("voice-box-llm.service", NO_CHANGE).argv
    assert flags["--llm-model"] == llm[llm.index("--model_alias") + 1]


def test_the_box_serves_every_kiosk_and_one_kiosk_does_not_cancel_anothers_answer() -> None:
    for unit in ("voice-box-asr.service", "voice-box-tts.service"):
        assert re.search(r"tcp://0\.0\.0\.0:\d+", " ".join(unit_command(unit, NO_CHANGE).argv))
    llm = unit_command("voice-box-llm.service", NO_CHANGE).argv
    assert llm[llm.index("--host") + 1] == "0.0.0.0"
    assert llm[llm.index("--interrupt_requests") + 1] == "False"
