"""A stop mid-reply keeps what was heard: `voice chat` on a private PulseAudio null sink, a long story
playing, then SIGINT, SIGTERM or SIGKILL.

A question played into the sink reaches the mic; a loopback server answers with a long story. Once the
session log shows words of it heard, the process gets the signal. These assert behaviour, never timing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fault_llm import FaultServer, delta_chunk, finish_chunk, replying
from tests.support.paths import AUDIO
from tests.support.processes import read_until
from tests.support.story import STORY, WORDS_BEFORE_STOP
from voice.conversation.items import AssistantText, UserText
from voice.conversation.log_records import ItemCommitted, ReplyHeard, TurnEnded, TurnLost
from voice.conversation.session_log import load_session


@pytest.fixture
def story_server() -> Iterator[FaultServer]:
    """A chat-completions server on loopback that answers every request with the long story."""
    chunks = [delta_chunk(word + " ") for word in STORY.split()]
    with FaultServer(replying(*chunks, finish_chunk())) as server:
        yield server


def as_in_a_terminal() -> None:
    """Ctrl-C at its default, as a terminal's foreground process has it: a suite started as a background
    job of a non-interactive shell passes "SIGINT ignored" down, and Python never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_chat(session: Path, server: FaultServer, device: str) -> subprocess.Popen[str]:
    chat = subprocess.Popen(
        [sys.executable, "-m", "voice", "chat", "--session", str(session),
         "--input-device", device, "--output-device", device,
         "--llm-url", server.url, "--llm-model", "story"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=as_in_a_terminal,
    )  # fmt: skip
    assert chat.stdout is not None
    read_until(chat.stdout, "listening")
    return chat


def heard_so_far(session: Path, turn: int) -> str:
    """The latest heard progress the session log has for ``turn``."""
    heard = ""
    for line in session.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "heard" and record.get("turn") == turn:
            heard = record["heard"]
    return heard


def ask_and_wait_for_words(chat: subprocess.Popen[str], session: Path, turn: int) -> str:
    """Ask the question aloud; return the log's heard progress once it has enough words of the story."""
    subprocess.run(["paplay", str(AUDIO / "what-weather.wav")], check=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        heard = heard_so_far(session, turn)
        if len(heard.split()) >= WORDS_BEFORE_STOP:
            return heard
        assert chat.poll() is None, "voice chat ended before the story was heard"
        time.sleep(0.1)
    raise AssertionError(f"the log never showed {WORDS_BEFORE_STOP} words heard: {session.read_text()}")


def finish(chat: subprocess.Popen[str]) -> str:
    """What the process printed until it exited (killed if it will not)."""
    assert chat.stdout is not None
    try:
        output = chat.stdout.read()
        chat.wait(timeout=60)
        return output
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        chat.stdout.close()


@pytest.mark.device
@pytest.mark.models
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_mid_reply_logs_the_heard_prefix_as_interrupted(
    signum: signal.Signals, pulse_device: str, story_server: FaultServer, tmp_path: Path
) -> None:
    session = tmp_path / "chat.jsonl"
    chat = start_chat(session, story_server, pulse_device)
    try:
        progress = ask_and_wait_for_words(chat, session, turn=1)
        chat.send_signal(signum)
    finally:
        output = finish(chat)

    assert chat.returncode == (130 if signum == signal.SIGINT else 0), output
    events = [logged.event for logged in load_session(session).events]
    end = events[-1]
    assert isinstance(end, TurnEnded), output
    assert (end.turn, end.cancelled) == (1, True)
    assert end.heard.startswith(progress)  # at least what the log had shown as heard, by whole words
    assert STORY.startswith(end.heard)
    assert len(end.heard) < len(STORY)
    assert events[-2] == ItemCommitted(AssistantText(end.heard, interrupted=True))
    shown = subprocess.run(
        [sys.executable, "-m", "voice", "log", "show", str(session)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"heard       {end.heard}" in shown


@pytest.mark.device
@pytest.mark.models
def test_a_session_killed_mid_reply_resumes_carrying_what_the_log_recorded_as_heard(
    pulse_device: str, story_server: FaultServer, tmp_path: Path
) -> None:
    session = tmp_path / "chat.jsonl"
    chat = start_chat(session, story_server, pulse_device)
    try:
        ask_and_wait_for_words(chat, session, turn=1)
        chat.send_signal(signal.SIGKILL)
    finally:
        finish(chat)
    killed = [logged.event for logged in load_session(session).events]
    assert not any(isinstance(event, TurnEnded) for event in killed)  # the turn was left open
    recorded = [event for event in killed if isinstance(event, ReplyHeard)][-1].heard

    chat = start_chat(session, story_server, pulse_device)  # resumes the same log
    try:
        ask_and_wait_for_words(chat, session, turn=2)  # the question again, answered with the story
        chat.send_signal(signal.SIGTERM)
    finally:
        output = finish(chat)

    assert chat.returncode == 0, output
    assert len(story_server.requests) == 2
    messages = story_server.requests[1].json()["messages"]
    question = "What will the weather be like tomorrow?"
    assert messages[1:] == [
        {"role": "user", "content": question},
        {"role": "assistant", "content": recorded},
        {"role": "user", "content": question},
    ]
    resumed = [logged.event for logged in load_session(session).events][len(killed) :]
    lost = next(event for event in resumed if isinstance(event, TurnLost))  # closed as the log resumed
    assert (lost.turn, lost.heard) == (1, recorded)
    assert resumed[: resumed.index(lost)] == [
        ItemCommitted(UserText(question)),
        ItemCommitted(AssistantText(recorded, interrupted=True)),
    ]
