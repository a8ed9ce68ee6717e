"""`voice chat` on real devices: a private PulseAudio null sink whose monitor is the microphone.

A question played into the sink reaches the mic; the assistant must hear it, ask the embedded model and
answer aloud. The VM's audio timing is irregular, so these assert behaviour, never timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import read_until
from voice.audio.pulse import private_pulse
from voice.conversation.log_records import InputReceived, TurnEnded, TurnStarted
from voice.conversation.session_log import load_session

AUDIO = Path(__file__).resolve().parents[2] / "audio"
SECONDS = 45


@pytest.mark.device
@pytest.mark.models
def test_chat_hears_a_question_through_the_device_and_answers_it(pulse_device: str, tmp_path: Path) -> None:
    session = tmp_path / "chat.jsonl"
    with subprocess.Popen(
        [sys.executable, "-m", "voice", "chat", "--seconds", str(SECONDS), "--session", str(session),
         "--input-device", pulse_device, "--output-device", pulse_device],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as chat:  # fmt: skip
        assert chat.stdout is not None
        for line in chat.stdout:  # "listening" is printed once both devices are open and started
            if line.startswith("listening"):
                break
        subprocess.run(["paplay", str(AUDIO / "what-weather.wav")], check=True)
        output = chat.stdout.read()
        assert chat.wait(timeout=180) == 0, output

    events = [logged.event for logged in load_session(session).events]
    inputs = [event.text for event in events if isinstance(event, InputReceived)]
    assert inputs == ["What will the weather be like tomorrow?"], (
        output
    )  # its own voice was never heard as words
    assert any(isinstance(event, TurnStarted) for event in events)
    ends = [event for event in events if isinstance(event, TurnEnded)]
    assert ends, output
    # Its own voice came back through the mic and did not stop it: the reply played out, or (on a loaded
    # machine, where playback crawls) was still playing when the session's 45 s ran out and was closed then.
    assert not ends[0].cancelled or (ends[0].cut_s or 0.0) >= SECONDS - 0.5, output
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


@pytest.mark.device
@pytest.mark.models
def test_chat_says_when_its_sound_server_dies_and_listens_again_once_it_is_back(tmp_path: Path) -> None:
    runtime = tmp_path / "pulse"
    with private_pulse(runtime) as server:
        chat = subprocess.Popen(
            [sys.executable, "-m", "voice", "chat", "--session", str(tmp_path / "chat.jsonl"),
             "--input-device", "pulse", "--output-device", "pulse",
             "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "unused"],
            env={**os.environ, "PULSE_SERVER": server},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert chat.stdout is not None
        read_until(chat.stdout, "listening")
    try:
        said = read_until(chat.stdout, "reopening the audio devices")  # the server is gone
        assert [line for line in said if line.startswith("voice: ")] == [said[-1]]  # in one line
        with private_pulse(runtime):  # back, at the same address
            read_until(chat.stdout, "audio devices reopened; listening")
            chat.send_signal(signal.SIGTERM)
            assert chat.wait(timeout=60) == 0
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        chat.stdout.close()
