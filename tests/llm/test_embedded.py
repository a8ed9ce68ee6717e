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
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import alive, servers_started_by, wait_until_gone
from voice.cancel import CancelToken
from voice.components import open_chat_model
from voice.config.llm import LlmConfig
from voice.conversation.continuation import Conversation
from voice.conversation.items import AssistantText, UserText
from voice.llm.embedded_chat import EmbeddedChatModel
from voice.llm.embedded_server import EmbeddedServer
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.openai_client import OpenAIChatModel, request_payload
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, ChatSettings, Finished, TextDelta
from voice.llm.prompt import SPEECH_SYSTEM_PROMPT
from voice.llm.retry import RetryPolicy

pytestmark = pytest.mark.models

SHORT = ChatSettings(max_tokens=16, temperature=0.0)
SHORT_STORY = ChatSettings(max_tokens=200, temperature=0.0)


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
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(log_path=tmp_path_factory.mktemp("llm") / "server.log") as server:
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

    conversation.cut_in(heard=prefix)
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
# It waits as `voice chat` does (asyncio's wakeup fd): a signal the kernel hands to one of voice's own threads
# still wakes the main thread, where a plain sleep would go on until it ended.
PARENT = textwrap.dedent(
    """
    import os, select, signal, socket, sys
    from pathlib import Path
    from voice.llm.embedded_server import EmbeddedServer

    signal.signal(signal.SIGINT, signal.default_int_handler)
    wake, woken = socket.socketpair()
    woken.setblocking(False)
    signal.set_wakeup_fd(woken.fileno())
    with EmbeddedServer(warm_up=False, log_path=Path(sys.argv[2])) as server:
        print(server.pid, flush=True)
        sys.stdin.readline()  # the test has seen the server alive
        if sys.argv[1] == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        while True:
            select.select([wake], [], [], 120)
            wake.recv(64)
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("ending", ["crash", signal.SIGTERM, signal.SIGINT])
def test_the_server_dies_with_voice(ending: str | signal.Signals, tmp_path: Path) -> None:
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            PARENT,
            "crash" if ending == "crash" else "wait",
            str(tmp_path / "server.log"),
        ],
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


def test_voice_ask_answers_with_the_embedded_model_and_stops_it(tmp_path: Path) -> None:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_LLM_")}
    ask = subprocess.Popen(
        [sys.executable, "-m", "voice", "ask", "Say hi.", "--max-tokens", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environ, "XDG_STATE_HOME": str(tmp_path)},  # where the server's log goes
    )
    out, err = ask.communicate(timeout=180)
    assert ask.returncode == 0, err
    assert out.strip()
    assert servers_started_by(ask.pid) == []
    assert "started server" in (tmp_path / "voice" / "llm-server.log").read_text()


# -- the server is watched: restarted when it dies, its output kept in a bounded log ----------------------


def kill(server: EmbeddedServer) -> int:
    """SIGKILL the server and wait until voice can know it died: every thread of it has exited (the
    kernel reports a multithreaded process's death only then, a moment after its sockets closed)."""
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert server.exit_code(wait_s=30) is not None
    return pid


def stream_killing_after_the_first_event(
    model: EmbeddedChatModel, request: ChatRequest, server: EmbeddedServer
) -> None:
    for index, _event in enumerate(model.stream(request, CancelToken())):
        if index == 0:
            kill(server)  # in the middle of a reply


def test_a_killed_server_is_started_again_and_the_conversation_goes_on(tmp_path: Path) -> None:
    with (
        EmbeddedServer(warm_up=False, log_path=tmp_path / "server.log") as server,
        EmbeddedChatModel(server) as model,
    ):
        question = ChatRequest((UserText("Say hello to me."),), settings=SHORT)
        assert text_of(list(model.stream(question, CancelToken()))).strip()

        first = kill(server)  # between two requests
        assert text_of(list(model.stream(question, CancelToken()))).strip()
        second = server.pid
        assert second is not None
        assert second != first

        story = ChatRequest((UserText("Tell me a long story about a cat."),), settings=SHORT_STORY)
        with pytest.raises(LLMError) as raised:
            stream_killing_after_the_first_event(model, story, server)
        assert (raised.value.code, raised.value.retriable) == (ErrorCode.UNAVAILABLE, True)
        assert "SIGKILL" in str(raised.value)
        assert RetryPolicy().delay_before_retry(raised.value, 1, heard_anything=False) is not None

        assert text_of(list(model.stream(question, CancelToken()))).strip()
        assert server.restarts == 2
    log = (tmp_path / "server.log").read_text()
    assert log.count("restarting it") == 2
    assert f"[{first}]" in log  # the servers' own lines, each under its pid
    assert f"[{second}]" in log


def test_the_servers_output_log_stays_bounded(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    with (
        EmbeddedServer(warm_up=False, log_path=log_path, log_max_bytes=2_000, log_backups=1) as server,
        httpx.Client() as http,
    ):
        for number in range(100):  # each request adds an access-log line: several times the limit
            assert http.get(f"{server.url}/models", params={"n": number}).status_code == 200
    files = sorted(tmp_path.iterdir())
    assert [file.name for file in files] == ["server.log", "server.log.1"]
    assert all(file.stat().st_size <= 2_000 for file in files)
    assert "GET /v1/models?n=99 " in log_path.read_text()  # still written after rotating


# -- what fits: the server's tokenizer and its context window --------------------------------------------


def prompt_tokens_reported(server: EmbeddedServer, request: ChatRequest) -> int:
    """What the server itself says the prompt took (a non-streamed answer reports usage)."""
    body = {**request_payload(server.model, request), "stream": False, "max_tokens": 1}
    del body["stream_options"]
    response = httpx.post(f"{server.url}/chat/completions", json=body, timeout=60)
    response.raise_for_status()
    reported: int = response.json()["usage"]["prompt_tokens"]
    return reported


@pytest.mark.parametrize(
    "items",
    [
        (UserText("Hello."),),
        (
            UserText("What is the weather like in Paris today?"),
            AssistantText("It is sunny, about twenty degrees.", interrupted=True),
            UserText(" and  tomorrow?\n"),
        ),
    ],
    ids=["one question", "an exchange"],
)
def test_the_token_counter_agrees_with_the_servers_own_count(
    embedded: EmbeddedServer, items: tuple[UserText | AssistantText, ...]
) -> None:
    request = ChatRequest(items, settings=SHORT)
    with EmbeddedChatModel(embedded) as model:
        counted = model.token_counter.count(request)
    assert counted == prompt_tokens_reported(embedded, request)


def test_a_conversation_too_long_for_the_context_is_too_large_and_the_next_one_is_answered(
    embedded: EmbeddedServer,
) -> None:
    too_long = ChatRequest((UserText("word " * 3000),), settings=SHORT)
    with EmbeddedChatModel(embedded) as model:
        assert model.context_tokens == 2048
        assert model.token_counter.count(too_long) > model.context_tokens
        with pytest.raises(LLMError) as raised:
            list(model.stream(too_long, CancelToken()))
        assert (raised.value.code, raised.value.dispatch, raised.value.retriable) == (
            ErrorCode.TOO_LARGE,
            Dispatch.REJECTED,
            False,
        )
        answer = list(model.stream(ChatRequest((UserText("Say hi."),), settings=SHORT), CancelToken()))
    assert text_of(answer).strip()
    assert embedded.restarts == 0


def test_the_configured_context_size_is_the_embedded_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # the server's log goes there
    fits_the_default = ChatRequest((UserText("word " * 300 + "How many words?"),), settings=SHORT)
    with open_chat_model(LlmConfig(context_tokens=256)) as model:
        assert model.context_tokens == 256
        assert 256 < model.token_counter.count(fits_the_default) < 2048
        with pytest.raises(LLMError) as raised:
            list(model.stream(fits_the_default, CancelToken()))
        assert raised.value.code is ErrorCode.TOO_LARGE
        assert text_of(list(model.stream(ChatRequest((UserText("Hi."),), settings=SHORT), CancelToken())))
    assert (tmp_path / "voice" / "llm-server.log").is_file()


def test_a_cancel_does_not_wait_for_a_restart(tmp_path: Path) -> None:
    with (
        EmbeddedServer(warm_up=False, log_path=tmp_path / "server.log") as server,
        EmbeddedChatModel(server) as model,
    ):
        dead = kill(server)
        cancel = CancelToken()
        events: list[ChatEvent] = []
        question = ChatRequest((UserText("Say hello to me."),), settings=SHORT)
        asking = threading.Thread(target=lambda: events.extend(model.stream(question, cancel)))
        asking.start()
        deadline = time.monotonic() + 30
        while server.pid == dead and time.monotonic() < deadline:
            time.sleep(0.01)
        restarting = server.pid
        assert restarting != dead
        cancel.cancel("the user spoke while the server restarted")
        asking.join(timeout=30)
        assert not asking.is_alive()
        assert events == [Finished(CANCELLED)]
        assert restarting is not None
        assert wait_until_gone(restarting)  # the half-started server was dropped

        assert text_of(list(model.stream(question, CancelToken()))).strip()
        assert server.restarts == 2
