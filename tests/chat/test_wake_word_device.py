"""`voice chat --wake-word` on real devices: a private PulseAudio null sink whose monitor is the mic.

Asleep, a question played into the sink goes unheard; said after the wake word, it is asked. The VM's
audio timing is irregular, so this asserts behaviour, never timing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.scripted_llm import scripted_llm
from tests.support.wake_words import QUESTION, piper_says, save
from voice.conversation.log_records import InputReceived
from voice.conversation.session_log import load_session
from voice.tts.piper_voice import PiperSynthesizer


@pytest.mark.device
@pytest.mark.models
def test_chat_asleep_hears_a_question_only_after_its_wake_word(
    pulse_device: str, synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    plain = save(piper_says(synthesizer, f"Okay, {QUESTION}"), tmp_path / "plain.wav")
    woken = save(piper_says(synthesizer, f"Hey Mycroft, {QUESTION}"), tmp_path / "woken.wav")
    session = tmp_path / "chat.jsonl"
    with scripted_llm(lambda question: "Ten past ten.") as llm, subprocess.Popen(
        [sys.executable, "-m", "voice", "chat", "--seconds", "25", "--session", str(session),
         "--input-device", pulse_device, "--output-device", pulse_device, "--wake-word", "hey_mycroft",
         "--llm-url", llm.url, "--llm-model", "scripted"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as chat:  # fmt: skip
        assert chat.stdout is not None
        for line in chat.stdout:  # "listening" is printed once both devices are open and started
            if line.startswith("listening"):
                break
        subprocess.run(["paplay", str(plain)], check=True)
        time.sleep(2.0)  # whisper would have had it by now, were it listening
        subprocess.run(["paplay", str(woken)], check=True)
        output = chat.stdout.read()
        assert chat.wait(timeout=180) == 0, output

    events = [logged.event for logged in load_session(session).events]
    assert [event.text for event in events if isinstance(event, InputReceived)] == ["What's the time?"], (
        output
    )
    assert output.index("(asleep)") < output.index("(awake: listening)") < output.index("you:       What's")
