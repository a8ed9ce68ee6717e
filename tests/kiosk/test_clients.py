"""Clients that misbehave cannot hurt the assistant or each other: a stalled reader, a flood of typed
input, an oversized frame, a storm of reconnects, all against a real kiosk server on loopback.

The kiosks here answer with an LLM nobody serves (typed input still gets its transcript, a new turn and
an error event), so no test needs a model. Tests that count the server's tasks run it in this process.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.support.kiosk import UNREACHABLE_LLM, Event, events_until, next_event, running_kiosk, send
from voice.chat.driver import DeviceSettings
from voice.client_events import ResponseHeard
from voice.components import open_chat_model
from voice.config.llm import LlmConfig
from voice.conversation.continuation import Conversation
from voice.kiosk.assistant import KioskAssistant
from voice.kiosk.audio import audio_setup
from voice.kiosk.client import QUEUE_EVENTS
from voice.kiosk.keeper import KeeperSettings, SessionKeeper
from voice.kiosk.limits import ALL_CLIENTS, TYPING
from voice.kiosk.server import MAX_FRAME_BYTES, KioskServer, ServerSettings
from voice.kiosk.sessions import SessionFiles
from voice.llm.port import ChatSettings

WATCHERS = 50
FLOOD_S = 8.0


@dataclass
class InProcess:
    """A kiosk server on this test's event loop: its port and the assistant whose events it sends."""

    port: int
    assistant: KioskAssistant

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


@asynccontextmanager
async def kiosk_in_process(tmp_path: Path) -> AsyncIterator[InProcess]:
    """What `voice kiosk --audio none` runs, on the running loop, with an LLM nobody serves."""
    files = SessionFiles(tmp_path / "sessions")
    audio = audio_setup("none", DeviceSettings())
    keeper = SessionKeeper(KeeperSettings(), files, {"audio": "none"})
    with open_chat_model(LlmConfig(url="http://127.0.0.1:9/v1", model="unused")) as model:
        assistant = KioskAssistant(
            model, ChatSettings(), audio, Conversation(None), files.create(), keeper.gate
        )
        server = KioskServer(keeper, ServerSettings(port=0))
        keeper.attach(assistant, server.broadcast)
        listening = await server.start()
        running = asyncio.create_task(assistant.run())
        try:
            yield InProcess(listening.sockets[0].getsockname()[1], assistant)
        finally:
            assistant.stop()
            await running
            listening.close()
            await listening.wait_closed()
            assistant.close()


def stalled_reader(port: int) -> socket.socket:
    """A websocket client that completes the upgrade and then never reads: a stalled page."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert response.startswith(b"HTTP/1.1 101"), response
    return sock


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(30)
    while chunk := sock.recv(65536):
        data += chunk
    return data


async def close_of(ws: ClientConnection, seconds: float = 60) -> tuple[int, str] | None:
    """Read until the server closes; its close code and reason."""
    try:
        while True:
            await next_event(ws, seconds)
    except ConnectionClosed as closed:
        return None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)


@pytest.mark.slow
@pytest.mark.realtime
def test_a_stalled_client_is_closed_with_1013_while_the_others_get_every_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closing = f"voice kiosk: closing a client (1013): too slow: {QUEUE_EVENTS} events unread"

    async def run() -> tuple[bytes, int]:
        async with kiosk_in_process(tmp_path) as kiosk, connect(kiosk.url) as reader:
            await next_event(reader)
            slow = await asyncio.to_thread(stalled_reader, kiosk.port)
            published, said = 0, ""
            while closing not in said and published < 20 * QUEUE_EVENTS:
                for _ in range(100):  # captions, as fast as the engine can publish them
                    published += 1
                    text = f"word {published} " + "x" * 200
                    kiosk.assistant.events.publish(ResponseHeard(1, text, published, 0.0))
                for index in range(published - 99, published + 1):  # a client that reads what it is sent
                    assert (await next_event(reader, 30))["words"] == index
                said += capsys.readouterr().err
            assert closing in said
            with slow:  # it has the close timeout to read up to its close frame
                received = await asyncio.to_thread(read_to_end, slow)
            kiosk.assistant.events.publish(ResponseHeard(1, "still here", published + 1, 0.0))
            assert (await next_event(reader, 30))["text"] == "still here"  # the reader is still served
            return received, published

    received, published = asyncio.run(run())
    assert published > QUEUE_EVENTS  # the queue filled only after the socket's buffers did
    reason = f"too slow: {QUEUE_EVENTS} events unread".encode()
    close_frame = bytes([0x88, 2 + len(reason)]) + (1013).to_bytes(2, "big") + reason
    assert received.endswith(close_frame)  # what was queued is dropped; the close says why


@dataclass
class Seen:
    """What one client received: events in order, and the close code and reason if it was closed."""

    events: list[Event]
    closed: tuple[int, str] | None = None
    sent: int = 0  # input.text frames it sent

    def of(self, kind: str) -> list[Event]:
        return [event for event in self.events if event["type"] == kind]

    def errors(self, code: str) -> list[Event]:
        return [event for event in self.of("error") if event["code"] == code]


def within(part: list[Event], whole: list[Event]) -> bool:
    """``part`` is a run of consecutive events in ``whole``."""
    return any(whole[start : start + len(part)] == part for start in range(len(whole) - len(part) + 1))


async def watch(url: str, until: asyncio.Event) -> Seen:
    """Read everything until ``until`` is set (and what was already on the way), or until closed."""
    async with connect(url) as ws:
        seen = Seen([await next_event(ws)])
        try:
            while not until.is_set():
                try:
                    seen.events.append(await next_event(ws, 0.5))
                except TimeoutError:
                    continue
            while True:  # drain what is in flight
                seen.events.append(await next_event(ws, 1.0))
        except TimeoutError:
            pass
        except ConnectionClosed as closed:
            seen.closed = None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)
        return seen


async def flood(url: str, until: asyncio.Event) -> list[Seen]:
    """input.text as fast as the socket takes it, reading the answers; closed, come back a second later."""
    connections: list[Seen] = []
    count = 0
    while not until.is_set():
        async with connect(url) as ws:
            seen = Seen([await next_event(ws)])
            connections.append(seen)

            async def read(ws: ClientConnection = ws, seen: Seen = seen) -> None:
                try:
                    while True:
                        seen.events.append(await next_event(ws, 60))
                except ConnectionClosed as closed:
                    seen.closed = None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)

            reader = asyncio.create_task(read())
            try:
                while not until.is_set() and not reader.done():
                    count += 1
                    seen.sent += 1
                    await send(ws, type="input.text", id=f"flood-{count}", text=f"flood {count}")
                    await asyncio.sleep(0)
            except ConnectionClosed:
                pass
            await ws.close()
            await reader
        await asyncio.sleep(1.0)
    return connections


async def talk(url: str, ids: list[str], until: asyncio.Event, stop: bool = False) -> Seen:
    """A person typing a line every 1.5 s (and pressing stop after each, if ``stop``), reading all
    the while, until ``until`` is set."""
    async with connect(url) as ws:
        seen = Seen([await next_event(ws)])

        async def read() -> None:
            try:
                while True:
                    seen.events.append(await next_event(ws, 3600))
            except ConnectionClosed as closed:
                seen.closed = None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)

        reader = asyncio.create_task(read())
        for input_id in ids:
            await send(ws, type="input.text", id=input_id, text=f"A question, {input_id}?")
            await asyncio.sleep(0.5)
            if stop:
                await send(ws, type="response.cancel")
            await asyncio.sleep(1.0)
        await until.wait()
        await asyncio.sleep(2.0)  # what is in flight, as the watchers drain it
        reader.cancel()
        return seen


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.realtime
def test_a_flood_is_rate_limited_while_a_watcher_and_a_typing_client_carry_on(tmp_path: Path) -> None:
    typed = [f"typed-{number}" for number in range(4)]

    async def run() -> tuple[Seen, Seen, list[Seen], float]:
        done = asyncio.Event()
        with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM) as kiosk:
            watcher = asyncio.create_task(watch(kiosk.url, done))
            await asyncio.sleep(0.5)
            started = time.monotonic()
            flooder = asyncio.create_task(flood(kiosk.url, done))
            typist = asyncio.create_task(talk(kiosk.url, typed, done))
            await asyncio.sleep(FLOOD_S)
            done.set()
            floods = await flooder
            elapsed = time.monotonic() - started
            return await watcher, await typist, floods, elapsed

    watcher, typist, floods, elapsed = asyncio.run(run())
    assert watcher.closed is None
    assert typist.closed is None
    assert not typist.errors("rate_limited")  # every line typed was taken
    assert within(typist.events[1:], watcher.events)  # the same conversation, event for event
    transcripts = [event["id"] for event in watcher.of("input.transcript")]
    assert [input_id for input_id in transcripts if input_id.startswith("typed-")] == typed
    assert not watcher.errors("rate_limited")  # the flooder's refusals go to it alone
    flooded = [input_id for input_id in transcripts if input_id.startswith("flood-")]
    sent = sum(connection.sent for connection in floods)
    assert len(flooded) <= TYPING.burst + len(floods) - 1 + TYPING.per_s * elapsed  # one burst, not one each
    assert len(flooded) <= ALL_CLIENTS.burst + ALL_CLIENTS.per_s * elapsed
    first = floods[0]
    assert first.errors("rate_limited")[0]["message"].startswith(
        "input.text over this client's limit (5 at once, then 1 a second): dropped; the next is taken in "
    )
    assert first.closed == (1008, "flooding: over 50 commands refused for their rate")
    assert sent > 10 * len(flooded)  # most of the flood was refused


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.realtime
def test_fifty_watchers_all_get_the_conversation_while_a_flooder_floods(tmp_path: Path) -> None:
    typed = [f"talker-{number}" for number in range(3)]

    async def run() -> tuple[list[Seen], Seen, list[Seen]]:
        done = asyncio.Event()
        with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM) as kiosk:
            watchers = [asyncio.create_task(watch(kiosk.url, done)) for _ in range(WATCHERS)]
            await asyncio.sleep(1.0)
            flooder = asyncio.create_task(flood(kiosk.url, done))
            talker = asyncio.create_task(talk(kiosk.url, typed, done, stop=True))
            await asyncio.sleep(FLOOD_S)
            done.set()
            floods = await flooder
            return [await watcher for watcher in watchers], await talker, floods

    watchers, talker, floods = asyncio.run(run())
    assert talker.closed is None
    assert not talker.errors("rate_limited")
    assert [seen.closed for seen in watchers] == [None] * WATCHERS  # nobody dropped
    first = watchers[0]
    assert all(seen.events == first.events for seen in watchers)  # the same events, in the same order
    assert [e["id"] for e in first.of("input.transcript") if e["id"].startswith("talker-")] == typed
    assert len(first.of("response.created")) >= len(typed)
    assert floods[0].errors("rate_limited")


def test_a_frame_over_the_size_limit_is_closed_with_1009_and_the_longest_input_fits(tmp_path: Path) -> None:
    longest = json.dumps({"type": "input.text", "id": "long", "text": "\U0001f98a" * 4000})  # \u escapes
    assert 40_000 < len(longest) < MAX_FRAME_BYTES == 65_536

    async def run() -> tuple[Event, Event, tuple[int, str] | None]:
        with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM) as kiosk:
            async with connect(kiosk.url, max_size=None) as ws:
                await next_event(ws)
                await ws.send(longest)
                heard = await next_event(ws)
                await ws.send(b"\x00\x00" * 16_000)  # a whole second of page audio, the most a frame may hold
                is_refusal = lambda event: event.get("code") == "bad_frame"  # noqa: E731
                refused = (await events_until(ws, is_refusal))[-1]  # it was read, though not taken here
                await ws.send(json.dumps({"type": "input.text", "text": "x" * MAX_FRAME_BYTES}))
                return heard, refused, await close_of(ws)

    heard, refused, closed = asyncio.run(run())
    assert (heard["type"], heard["id"]) == ("input.transcript", "long")
    assert refused["message"].startswith("binary frames carry audio")
    assert closed is not None
    assert closed[0] == 1009


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert found is not None
    return int(found.group(1)) / 1024


CONNECTS = 300


def test_a_reconnect_storm_leaves_no_descriptors_tasks_or_memory_behind(tmp_path: Path) -> None:
    async def visit(kiosk: InProcess, number: int) -> None:
        """Mostly pages that come and go, some that are thrown out, some that just vanish."""
        if number % 10 == 9:
            _, writer = await asyncio.open_connection("127.0.0.1", kiosk.port)
            writer.write(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
            await writer.drain()
            writer.transport.abort()  # gone mid-upgrade, no close of any kind
            return
        if number % 10 == 7:
            vanishing = await connect(kiosk.url)
            await next_event(vanishing)
            vanishing.transport.abort()  # gone without a close frame
            await vanishing.wait_closed()
            return
        async with connect(kiosk.url) as ws:
            await next_event(ws)
            if number % 10 == 5:
                for _ in range(10):
                    await ws.send("not json")
                assert await close_of(ws, 10) == (1008, "10 bad frames in a row")

    async def settled(baseline: tuple[int, int]) -> tuple[int, int]:
        """Descriptors and tasks, once they are back to ``baseline`` (or after 10 s)."""
        end = time.monotonic() + 10
        while True:
            now = (open_fds(), len(asyncio.all_tasks()))
            if now == baseline or time.monotonic() > end:
                return now
            await asyncio.sleep(0.1)

    async def run() -> tuple[tuple[int, int], tuple[int, int], int, float]:
        async with kiosk_in_process(tmp_path) as kiosk:
            for number in range(20):  # warm up: first imports, first buffers
                await visit(kiosk, number)
            await asyncio.sleep(0.5)
            baseline = (open_fds(), len(asyncio.all_tasks()))
            gc.collect()
            blocks, rss_before = sys.getallocatedblocks(), rss_mb()
            for number in range(CONNECTS):
                await visit(kiosk, number)
            after = await settled(baseline)
            gc.collect()
            return baseline, after, sys.getallocatedblocks() - blocks, rss_mb() - rss_before

    baseline, after, more_blocks, more_rss_mb = asyncio.run(run())
    assert after == baseline
    assert more_blocks < 3 * CONNECTS  # a client left behind would hold dozens: a queue, a task, its buckets
    assert more_rss_mb < 5.0


def test_a_client_offering_compression_gets_events_uncompressed(tmp_path: Path) -> None:
    """Deflate would be paid once per watcher for each event (and for each 20 ms of page audio)."""

    async def run() -> tuple[str | None, Event]:
        async with kiosk_in_process(tmp_path) as kiosk, connect(kiosk.url) as ws:  # offers deflate
            return ws.response.headers.get("Sec-WebSocket-Extensions"), await next_event(ws)

    extensions, snapshot = asyncio.run(run())
    assert extensions is None  # none agreed: every watcher gets the same bytes, encoded once
    assert snapshot["type"] == "session.created"
