"""Against the real embedded llama.cpp server (SmolLM2-135M): streaming, cancel-then-continue, lifetime.

The model is tiny and silly, so these tests assert behaviour (streamed, non-empty, the cancelled prefix
carried into the next request), never content.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from voice.cancel import CancelToken
from voice.conversation.continuation import Conversation
from voice.conversation.items import AssistantText, UserText
from voice.llm.embedded import EmbeddedServer
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, ChatSettings, Finished, TextDelta
from voice.llm.prompt import SPEECH_SYSTEM_PROMPT

pytestmark = pytest.mark.models

SHORT = ChatSettings(max_tokens=16, temperature=0.0)


class RecordingModel:
    """The real client over an httpx client that keeps the JSON body of every request it sends."""

    def __init__(self, server: EmbeddedServer) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._http = httpx.Client(event_hooks={"request": [self._record]})
        self.model = OpenAIChatModel(server.url, server.model, http_client=self._http)

    def _record(self, request: httpx.Request) -> None:
        self.bodies.append(json.loads(request.content))

    def close(self) -> None:
        self._http.close()


@pytest.fixture(scope="session")
def embedded() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as server:
        yield server


@pytest.fixture
def recording(embedded: EmbeddedServer) -> Iterator[RecordingModel]:
    model = RecordingModel(embedded)
    yield model
    model.close()


def text_of(events: list[ChatEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def test_a_reply_streams_as_several_deltas(recording: RecordingModel) -> None:
    events = list(
        recording.model.stream(ChatRequest((UserText("Say hello to me."),), settings=SHORT), CancelToken())
    )
    *deltas, finished = events
    assert len(deltas) > 1
    assert all(isinstance(event, TextDelta) for event in deltas)
    assert text_of(events).strip()
    assert isinstance(finished, Finished)
    assert finished.reason in ("stop", "length")
    assert recording.bodies[0]["messages"][0] == {"role": "system", "content": SPEECH_SYSTEM_PROMPT}


def test_a_cancelled_reply_carries_only_its_delivered_prefix(recording: RecordingModel) -> None:
    conversation = Conversation()
    first = conversation.submit("Tell me a long story about a cat.")
    assert first is not None
    cancel = CancelToken()
    delivered: list[ChatEvent] = []
    long_reply = ChatSettings(max_tokens=200, temperature=0.0)
    for event in recording.model.stream(ChatRequest(first.items, settings=long_reply), cancel):
        delivered.append(event)
        if isinstance(event, TextDelta):
            conversation.add_text(event.text)
        if len(delivered) == 3:
            cancel.cancel("the user spoke")
    assert delivered[-1] == Finished(CANCELLED)
    prefix = text_of(delivered).strip()
    assert prefix

    conversation.cancel(heard=prefix)
    second = conversation.submit("Make it about a dog instead.")
    assert second is not None
    assert second.items == (
        UserText("Tell me a long story about a cat."),
        AssistantText(prefix, interrupted=True),
        UserText("Make it about a dog instead."),
    )
    reply = list(recording.model.stream(ChatRequest(second.items, settings=SHORT), CancelToken()))
    assert text_of(reply).strip()
    assert recording.bodies[1]["messages"][1:] == [
        {"role": "user", "content": "Tell me a long story about a cat."},
        {"role": "assistant", "content": prefix},
        {"role": "user", "content": "Make it about a dog instead."},
    ]


def test_two_completed_turns_continue_the_conversation(recording: RecordingModel) -> None:
    conversation = Conversation()
    replies = []
    for question in ("What is your name?", "Say it again."):
        request = conversation.submit(question)
        assert request is not None
        events = list(recording.model.stream(ChatRequest(request.items, settings=SHORT), CancelToken()))
        for event in events:
            if isinstance(event, TextDelta):
                conversation.add_text(event.text)
        conversation.complete()
        replies.append(text_of(events).strip())
    assert all(replies)
    assert recording.bodies[1]["messages"][1:] == [
        {"role": "user", "content": "What is your name?"},
        {"role": "assistant", "content": replies[0]},
        {"role": "user", "content": "Say it again."},
    ]


# -- the server's lifetime follows voice's ----------------------------------------------------------------

# A stand-in for voice. It puts back Python's Ctrl-C handler, as a process in a terminal's foreground has it:
# a suite started as a background job of a non-interactive shell passes "SIGINT ignored" down to it, and
# then the SIGINT case waited out the sleep below (reproduced with `(trap '' INT; pytest ...)`).
PARENT = textwrap.dedent(
    """
    import os, signal, sys, time
    from voice.llm.embedded import EmbeddedServer

    signal.signal(signal.SIGINT, signal.default_int_handler)
    with EmbeddedServer(warm_up=False) as server:
        print(server.pid, flush=True)
        sys.stdin.readline()  # the test has seen the server alive
        if sys.argv[1] == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(120)
    """
)


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan may wait a while to be reaped in a container)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def wait_until_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("ending", ["crash", signal.SIGTERM, signal.SIGINT])
def test_the_server_dies_with_voice(ending: str | signal.Signals) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", PARENT, "crash" if ending == "crash" else "wait"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as parent:
        assert parent.stdout is not None
        assert parent.stdin is not None
        server_pid = int(parent.stdout.readline())
        assert alive(server_pid)
        parent.stdin.write("go\n")
        parent.stdin.flush()
        if isinstance(ending, signal.Signals):
            parent.send_signal(ending)
        parent.wait(timeout=30)
    assert wait_until_gone(server_pid)


def test_voice_ask_answers_with_the_embedded_model_and_stops_it() -> None:
    ask = subprocess.Popen(
        [sys.executable, "-m", "voice", "ask", "Say hi.", "--max-tokens", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={name: value for name, value in os.environ.items() if not name.startswith("VOICE_LLM_")},
    )
    out, err = ask.communicate(timeout=180)
    assert ask.returncode == 0, err
    assert out.strip()
    assert servers_started_by(ask.pid) == []


def servers_started_by(parent_pid: int) -> list[int]:
    """Live embedded-server launchers whose recorded parent is ``parent_pid``."""
    marker = f"voice.llm.server_child\0{parent_pid}\0".encode()
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes() and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue  # the process ended while we looked
    return found
