"""`voice chat` on real devices: a private PulseAudio null sink whose monitor is the microphone.

A question played into the sink reaches the mic; the assistant must hear it, ask the embedded model and
answer aloud. The VM's audio timing is irregular, so these assert behaviour, never timing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from voice.conversation.events import InputReceived, TurnEnded, TurnStarted
from voice.conversation.session_log import load_session

AUDIO = Path(__file__).resolve().parents[2] / "audio"


@pytest.mark.device
@pytest.mark.models
def test_chat_hears_a_question_through_the_device_and_answers_it(pulse_device: str, tmp_path: Path) -> None:
    session = tmp_path / "chat.jsonl"
    with subprocess.Popen(
        [sys.executable, "-m", "voice", "chat", "--seconds", "45", "--session", str(session),
         "--input-device", pulse_device, "--output-device", pulse_device],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as chat:  # fmt: skip
        assert chat.stdout is not None
        for line in chat.stdout:  # wait until it listens, then speak into the room
            if line.startswith("listening"):
                break
        time.sleep(1.0)
        subprocess.run(["paplay", str(AUDIO / "what-weather.wav")], check=True)
        output = chat.stdout.read()
        assert chat.wait(timeout=180) == 0, output

    events = [logged.event for logged in load_session(session).events]
    inputs = [event.text for event in events if isinstance(event, InputReceived)]
    assert inputs[0] == "What will the weather be like tomorrow?"
    assert any(isinstance(event, TurnStarted) for event in events)
    ends = [event for event in events if isinstance(event, TurnEnded)]
    assert ends, output
    assert not ends[0].cancelled, output  # its own voice came back through the mic and did not stop it
    assert "you:       What will the weather be like tomorrow?" in output


@pytest.mark.device
def test_chat_with_a_missing_device_says_so_in_one_line(pulse_device: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voice", "chat", "--seconds", "1", "--session", str(tmp_path / "s.jsonl"),
         "--input-device", "no-such-microphone"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("voice: error: ")
    assert "no-such-microphone" in result.stderr
    assert "Traceback" not in result.stderr
