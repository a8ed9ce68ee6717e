"""The §7 API of a real `voice kiosk --audio none` with the embedded model, through a real websockets client.

One kiosk serves the module; each test opens its own connections. Replies come from SmolLM2, so the
tests assert what the API promises (order, ids, heard prefixes), never what the model says.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.request

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.support.kiosk import Event, Kiosk, events_until, next_event, of_type, send
from voice.conversation.log_records import InputReceived, TurnEnded
from voice.conversation.session_log import load_session

pytestmark = pytest.mark.models


def test_the_page_is_served_at_the_root(llm_kiosk: Kiosk) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{llm_kiosk.port}/", timeout=30) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert b'new URL("/ws"' in response.read()


def test_a_new_client_gets_a_snapshot_first(llm_kiosk: Kiosk) -> None:
    async def run() -> Event:
        async with connect(llm_kiosk.url) as ws:
            return await next_event(ws)

    snapshot = asyncio.run(run())
    assert list(snapshot) == ["type", "session", "state", "history", "settings"]
    assert snapshot["type"] == "session.created"
    assert snapshot["state"] == "listening"
    assert snapshot["settings"]["audio"] == "none"
    assert snapshot["session"].startswith("kiosk-")


def test_a_typed_question_is_answered_and_every_client_sees_it_heard(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[list[Event], list[Event]]:
        async with connect(llm_kiosk.url) as asker, connect(llm_kiosk.url) as watcher:
            await next_event(asker)
            await next_event(watcher)
            await send(asker, type="input.text", id="q-answered", text="Say hello.")
            done = of_type("response.done")
            return await events_until(asker, done), await events_until(watcher, done)

    asked, watched = asyncio.run(run())
    assert asked == watched  # every event to every client, in the same order
    kinds = [event["type"] for event in asked]
    assert asked[0] == {
        "type": "input.transcript", "id": "q-answered", "text": "Say hello.", "merged": None,
        "t": asked[0]["t"],
    }  # fmt: skip
    assert kinds.index("response.created") < kinds.index("response.heard") < kinds.index("response.done")
    states = [event["state"] for event in asked if event["type"] == "state"]
    assert states[:2] == ["thinking", "speaking"]
    heard = [event for event in asked if event["type"] == "response.heard"]
    assert [event["words"] for event in heard] == list(range(1, len(heard) + 1))  # word by word
    assert asked[-1]["text"] == heard[-1]["text"]
    assert all(later["t"] >= earlier["t"] for earlier, later in itertools.pairwise(heard))


def test_a_stop_keeps_the_words_shown_so_far_for_the_next_request(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[list[Event], Event]:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            await send(ws, type="input.text", id="q-stopped", text="Tell me a long story about a fox.")
            seen = await events_until(ws, lambda e: e["type"] == "response.heard" and e["words"] >= 3)
            await send(ws, type="response.cancel")
            seen += await events_until(ws, of_type("response.interrupted"))
            seen += await events_until(ws, lambda e: e == {**e, "type": "state", "state": "listening"})
        async with connect(llm_kiosk.url) as late:
            return seen, await next_event(late)

    seen, snapshot = asyncio.run(run())
    interrupted = seen[-2]
    shown = [event["text"] for event in seen if event["type"] == "response.heard"]
    assert interrupted["type"] == "response.interrupted"
    assert interrupted["heard"] == shown[-1]  # exactly the words shown, no more
    assert "response.done" not in [event["type"] for event in seen]
    assert snapshot["history"][-2:] == [
        {"role": "user", "text": "Tell me a long story about a fox."},
        {"role": "assistant", "text": interrupted["heard"], "interrupted": True},
    ]


def test_a_repeated_id_is_acknowledged_and_cancels_nothing(llm_kiosk: Kiosk) -> None:
    async def run() -> list[Event]:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            await send(ws, type="input.text", id="q-twice", text="Tell me a long story about a cat.")
            seen = await events_until(ws, of_type("response.heard"))
            await send(ws, type="input.text", id="q-twice", text="Tell me a long story about a cat.")
            seen += await events_until(ws, of_type("input.duplicate"))
            seen += await events_until(ws, of_type("response.heard"))  # the reply goes on
            await send(ws, type="response.cancel")
            seen += await events_until(ws, of_type("response.interrupted"))
            return seen

    seen = asyncio.run(run())
    kinds = [event["type"] for event in seen]
    duplicate = kinds.index("input.duplicate")
    assert seen[duplicate]["id"] == "q-twice"
    assert kinds.count("response.created") == 1
    assert kinds.count("input.transcript") == 1
    assert "response.interrupted" not in kinds[duplicate : kinds.index("response.heard", duplicate)]


def test_mute_and_unmute_show_in_the_state(llm_kiosk: Kiosk) -> None:
    async def run() -> list[Event]:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            await send(ws, type="mic.mute")
            seen = [await next_event(ws)]
            async with connect(llm_kiosk.url) as late:
                seen.append(await next_event(late))
            await send(ws, type="mic.unmute")
            seen.append(await next_event(ws))
            return seen

    muted, snapshot, unmuted = asyncio.run(run())
    assert (muted["type"], muted["state"]) == ("state", "muted")
    assert snapshot["state"] == "muted"
    assert (unmuted["type"], unmuted["state"]) == ("state", "listening")


def test_a_reset_starts_a_new_conversation_and_the_old_stays_in_its_log(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[Event, Event]:
        async with connect(llm_kiosk.url) as ws:
            before = await next_event(ws)
            await send(ws, type="input.text", id="q-before-reset", text="Remember the word lemon.")
            await events_until(ws, of_type("response.heard"))
            await send(ws, type="session.reset")
            after = (await events_until(ws, of_type("session.created")))[-1]
            return before, after

    before, after = asyncio.run(run())
    assert after["session"] != before["session"]
    assert after["history"] == []
    old = load_session(llm_kiosk.sessions / f"{before['session']}.jsonl")
    inputs = [logged.event for logged in old.events if isinstance(logged.event, InputReceived)]
    assert inputs[-1].input_id == "q-before-reset"
    ends = [logged.event for logged in old.events if isinstance(logged.event, TurnEnded)]
    assert ends[-1].cancelled  # the reply in flight was cut, what was heard kept
    assert load_session(llm_kiosk.sessions / f"{after['session']}.jsonl").events == ()


BAD_FRAMES = [
    ("not json", "not JSON"),
    ("[1, 2]", "a command is a JSON object"),
    ('{"text": "hi"}', 'a command needs a string "type"'),
    ('{"type": "input.speak"}', "unknown command type 'input.speak'"),
    ('{"type": "input.text"}', 'input.text needs a string "text"'),
    ('{"type": "input.text", "text": 7}', 'input.text needs a string "text"'),
    ('{"type": "input.text", "text": "hi", "id": 7}', 'input.text "id" must be a non-empty string'),
    (b"\x00\x01", "binary frames carry audio"),
]


def test_bad_frames_get_an_error_each_and_the_connection_stays_open(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[list[Event], Event]:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            errors = []
            for frame, _ in BAD_FRAMES:
                await ws.send(frame)
                errors.append(await next_event(ws))
            await send(ws, type="mic.mute")  # a good frame after them is still taken
            state = await next_event(ws)
            await send(ws, type="mic.unmute")
            await next_event(ws)
            return errors, state

    errors, state = asyncio.run(run())
    for error, (_, message) in zip(errors, BAD_FRAMES, strict=True):
        assert error["type"] == "error"
        assert error["code"] == "bad_frame"
        assert error["message"].startswith(message)
        assert "\n" not in error["message"]
    assert state["state"] == "muted"


async def close_of(ws: ClientConnection) -> tuple[int, str] | None:
    """Read until the server closes; its close code and reason."""
    try:
        while True:
            await next_event(ws, 60)
    except ConnectionClosed as closed:
        return None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)


def test_a_client_that_keeps_sending_bad_frames_is_closed_with_1008(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[int, str] | None:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            for _ in range(10):
                await ws.send("not json")
            return await close_of(ws)

    assert asyncio.run(run()) == (1008, "10 bad frames in a row")


def test_an_oversized_frame_is_closed_with_1009(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[int, str] | None:
        async with connect(llm_kiosk.url, max_size=None) as ws:
            await next_event(ws)
            await ws.send(json.dumps({"type": "input.text", "text": "x" * 100_000}))
            return await close_of(ws)

    closed = asyncio.run(run())
    assert closed is not None
    assert closed[0] == 1009
