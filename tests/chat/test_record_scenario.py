"""`voice chat --record-scenario FILE` on real devices (a private PulseAudio null sink whose monitor is the
mic, the embedded model answering): a question, then a cut-in once the reply is heard; the scenario it
writes holds the user's words as WAVs and the live replies, and `voice test` replays it ending as it did.

The VM's audio timing is irregular, so this asserts what happened, never when.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import AUDIO
from tests.support.processes import read_until
from voice.conversation.log_records import TurnEnded
from voice.conversation.session_log import load_session

SECONDS = 40


def wait_for_heard_words(session: Path, times: int = 5, timeout: float = 120.0) -> None:
    """Until the session log has said ``times`` that words of the reply were heard (about half a second
    apart): the cut-in then comes 2.5 s or more into the session's first reply. This test is about the
    recording (it keeps what ASR heard, cancelled in hindsight while the live canceller is young); how a
    cut-in sooner in the first reply is heard is tests/audio/test_asr_signal.py's."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if session.exists() and session.read_text(encoding="utf-8").count('"type": "heard"') >= times:
            return
        time.sleep(0.05)
    raise AssertionError("the reply was not heard playing")


@pytest.mark.device
@pytest.mark.models
def test_a_conversation_cut_in_on_recorded_live_replays_as_it_ended(
    pulse_device: str, tmp_path: Path
) -> None:
    session, scenario = tmp_path / "chat.jsonl", tmp_path / "recorded" / "went-wrong.json"
    scenario.parent.mkdir()
    with subprocess.Popen(
        [sys.executable, "-m", "voice", "chat", "--seconds", str(SECONDS), "--session", str(session),
         "--record-scenario", str(scenario), "--input-device", pulse_device, "--output-device", pulse_device],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as chat:  # fmt: skip
        assert chat.stdout is not None
        read_until(chat.stdout, "listening")
        subprocess.run(["paplay", str(AUDIO / "what-weather.wav")], check=True)
        wait_for_heard_words(session)
        subprocess.run(["paplay", str(AUDIO / "sorry-sunday.wav")], check=True)
        output = chat.stdout.read()
        assert chat.wait(timeout=240) == 0, output

    assert f"scenario {scenario} " in output, output
    ends = [e.event for e in load_session(session).events if isinstance(e.event, TurnEnded)]
    assert ends[0].cancelled, output  # the cut-in cut the first reply live
    recorded = json.loads(scenario.read_text(encoding="utf-8"))
    replies = [r if isinstance(r, str) else r["text"] for r in recorded["llm"]["replies"]]
    assert replies == [end.generated for end in ends]  # the live replies, as the script
    wavs = [scenario.parent / cue["wav"] for cue in recorded["user"]]
    assert len(wavs) >= 2
    assert all(wav.is_file() for wav in wavs)
    assert "at_s" in recorded["user"][0]  # the question, before any reply played
    assert {"cut": 1, "by": 2} in recorded["expect"]  # how it ended live
    assert {"request": 2, "carries": "interrupted"} in recorded["expect"]

    replay = subprocess.run(
        [sys.executable, "-m", "voice", "test", str(scenario), "--out", str(tmp_path / "replay")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert '  PASS {"cut": 1, "by": 2}: reply 1 was cut by user cue 2' in replay.stdout
    assert '  PASS {"request": 2, "carries": "interrupted"}' in replay.stdout
    assert "FAIL" not in replay.stdout
