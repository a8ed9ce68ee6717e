"""Misbehaving clients against a real `voice kiosk --audio none`, as JSON: can one hurt the others?

For ``--seconds`` (default 300) on loopback: ``--watchers`` (50) clients read every event; one client
completes the upgrade and never reads again (stalled); one floods ``input.text`` as fast as its socket
takes it, reading its answers, and comes back a second after it is closed; one connects, takes its
snapshot and leaves, every second; one talks: a question every 5 s, stop pressed after two heard words.
The kiosk answers with the embedded model unless ``--llm-url`` and ``--llm-model`` name another.

Reported: every client the kiosk closed, by close code and reason (from its own log) and when; per
kind of client, what it sent and received and how it was closed (watchers: how many were dropped,
whether all got the same events); the flood's accepted inputs and refusals; the reconnects' snapshot
times; the kiosk's RSS and open descriptors (and the model server's RSS) every 30 s; the load average.

Usage: python benchmarks/kiosk_clients.py [--seconds 300] [--watchers 50] [--against TREE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from common.harness import common_options, print_measured
from common.kiosk_process import KioskOutput, children_of, fds, kiosk_closes, rss_kb, stop_kiosk
from common.talking_page import closed_as
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

SAMPLE_EVERY_S = 30.0
TALK_EVERY_S = 5.0
QUIET_S = 3.0  # after the misbehaving clients stop, what is in flight reaches the watchers


@dataclass
class Watcher:
    events: int = 0
    bytes: int = 0
    flood_inputs: int = 0  # the flooder's input.text that the kiosk took (their transcripts)
    closed: str | None = None
    digest: Any = field(default_factory=hashlib.sha256)  # of every event after the snapshot


async def watch(url: str, done: asyncio.Event, watcher: Watcher) -> None:
    try:
        async with connect(url, max_size=None) as ws:
            await ws.recv()
            while True:
                try:
                    message = await asyncio.wait_for(ws.recv(), QUIET_S)
                except TimeoutError:
                    if done.is_set():
                        return
                    continue
                data = message.encode() if isinstance(message, str) else message
                watcher.events += 1
                watcher.bytes += len(data)
                watcher.flood_inputs += b'"type": "input.transcript", "id": "flood-' in data
                watcher.digest.update(data)
    except ConnectionClosed as closed:
        watcher.closed = closed_as(closed)


def stalled_reader(port: int) -> socket.socket:
    """Completes the upgrade and never reads again, with a small receive buffer: a page that hung."""
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
    return sock


@dataclass
class Flooder:
    connections: int = 0
    sent: int = 0
    refused: int = 0
    closed: Counter[str] = field(default_factory=Counter)

    def figures(self, watcher: Watcher) -> dict[str, Any]:
        """What it sent and how it was answered; ``watcher`` saw which of its inputs the kiosk took."""
        return {
            "connections": self.connections,
            "input_text_sent": self.sent,
            "input_text_taken": watcher.flood_inputs,
            "rate_limited_errors_received": self.refused,
            "closed": dict(self.closed),
        }


async def flood(url: str, done: asyncio.Event, flooder: Flooder) -> None:
    """input.text as fast as the socket takes it; closed, it comes back a second later."""
    while not done.is_set():
        async with connect(url, max_size=None) as ws:
            await ws.recv()
            flooder.connections += 1

            async def read(ws: ClientConnection = ws) -> None:
                try:
                    async for message in ws:
                        flooder.refused += '"code": "rate_limited"' in str(message)
                except ConnectionClosed:
                    pass

            reader = asyncio.create_task(read())
            try:
                while not done.is_set() and not reader.done():
                    flooder.sent += 1
                    text = json.dumps({"type": "input.text", "id": f"flood-{flooder.sent}", "text": "Flood!"})
                    await ws.send(text)
                    await asyncio.sleep(0)
            except ConnectionClosed:
                pass
            if done.is_set():
                await ws.close()
            await reader
            try:
                await ws.recv()
            except ConnectionClosed as closed:
                flooder.closed[closed_as(closed)] += 1
        await asyncio.sleep(1.0)


@dataclass
class Reconnector:
    connects: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    snapshot_ms: list[float] = field(default_factory=list)


async def reconnect(url: str, done: asyncio.Event, reconnector: Reconnector) -> None:
    while not done.is_set():
        started = time.monotonic()
        try:
            async with connect(url, max_size=None) as ws:
                await asyncio.wait_for(ws.recv(), 30)
                reconnector.snapshot_ms.append((time.monotonic() - started) * 1000)
            reconnector.connects += 1
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            reconnector.failures[type(exc).__name__] += 1
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))


@dataclass
class Talker:
    asked: int = 0
    stops: int = 0
    transcripts: int = 0
    ends: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    closed: str | None = None


async def talk(url: str, done: asyncio.Event, talker: Talker) -> None:
    """A question every 5 s; stop pressed after two heard words of the reply to it."""
    try:
        async with connect(url, max_size=None) as ws:
            await ws.recv()

            async def read() -> None:
                try:
                    async for message in ws:
                        await take(json.loads(message))
                except ConnectionClosed as closed:
                    talker.closed = closed_as(closed)

            async def take(event: dict[str, Any]) -> None:
                kind = event["type"]
                if kind == "input.transcript" and str(event.get("id")).startswith("talk-"):
                    talker.transcripts += 1
                elif kind == "error":
                    talker.errors[event["code"]] += 1
                elif kind in {"response.done", "response.interrupted"}:
                    talker.ends[kind] += 1
                elif kind == "response.heard" and event["words"] == 2:
                    talker.stops += 1
                    await ws.send(json.dumps({"type": "response.cancel"}))

            reader = asyncio.create_task(read())
            while not done.is_set():
                talker.asked += 1
                question = {
                    "type": "input.text",
                    "id": f"talk-{talker.asked}",
                    "text": "Tell me about foxes.",
                }
                await ws.send(json.dumps(question))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), TALK_EVERY_S)
            reader.cancel()
    except ConnectionClosed as closed:
        talker.closed = closed_as(closed)


async def sample(pid: int, started: float, done: asyncio.Event, samples: list[dict[str, Any]]) -> None:
    """Every 30 s, and once more when ``done``."""
    while True:
        llm = children_of(pid)
        samples.append({
            "t_s": round(time.monotonic() - started),
            "kiosk_rss_mb": round((rss_kb(pid) or 0) / 1024, 1),
            "kiosk_fds": fds(pid),
            "llm_rss_mb": round(sum(rss_kb(child) or 0 for child in llm) / 1024, 1) if llm else None,
        })  # fmt: skip
        if done.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), SAMPLE_EVERY_S)


async def run(port: int, pid: int, seconds: float, watchers_wanted: int) -> dict[str, Any]:
    url = f"ws://127.0.0.1:{port}/ws"
    done, stop_watching, all_gone = asyncio.Event(), asyncio.Event(), asyncio.Event()
    started = time.monotonic()
    samples: list[dict[str, Any]] = []
    sampler = asyncio.create_task(sample(pid, started, all_gone, samples))
    watchers = [Watcher() for _ in range(watchers_wanted)]
    watching = [asyncio.create_task(watch(url, stop_watching, watcher)) for watcher in watchers]
    await asyncio.sleep(1.0)
    stalled = await asyncio.to_thread(stalled_reader, port)
    flooder, reconnector, talker = Flooder(), Reconnector(), Talker()
    others = [
        asyncio.create_task(flood(url, done, flooder)),
        asyncio.create_task(reconnect(url, done, reconnector)),
        asyncio.create_task(talk(url, done, talker)),
    ]
    await asyncio.sleep(seconds)
    done.set()
    await asyncio.gather(*others)
    stop_watching.set()
    await asyncio.gather(*watching)
    stalled.close()
    await asyncio.sleep(1.0)  # the last sample: every client gone
    all_gone.set()
    await sampler
    digests = Counter(watcher.digest.hexdigest() for watcher in watchers if watcher.closed is None)
    snapshots = sorted(reconnector.snapshot_ms)
    return {
        "seconds": seconds,
        "watchers": {
            "count": len(watchers),
            "dropped": Counter(watcher.closed for watcher in watchers if watcher.closed is not None),
            "all_got_the_same_events": len(digests) == 1,
            "events_each": sorted({watcher.events for watcher in watchers}),
            "bytes_each": sorted({watcher.bytes for watcher in watchers}),
        },
        "flooder": flooder.figures(watchers[0]),
        "reconnector": {
            "connects": reconnector.connects,
            "failures": dict(reconnector.failures),
            "snapshot_ms": {
                "median": round(statistics.median(snapshots), 1) if snapshots else None,
                "max": round(snapshots[-1], 1) if snapshots else None,
            },
        },
        "talker": {
            "asked": talker.asked,
            "transcripts_seen": talker.transcripts,
            "stops_pressed": talker.stops,
            "ends": dict(talker.ends),
            "errors": dict(talker.errors),
            "closed": talker.closed,
        },
        "samples_every_30_s": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--watchers", type=int, default=50)
    parser.add_argument("--llm-url", help="an OpenAI-compatible server instead of the embedded model")
    parser.add_argument("--llm-model")
    common_options(parser, out=False)
    args = parser.parse_args()
    print_measured(__file__, args, lambda: measure(args))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
        env["XDG_STATE_HOME"] = folder
        command = [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", "none",
                   "--sessions", f"{folder}/sessions"]  # fmt: skip
        if args.llm_url:
            command += ["--llm-url", args.llm_url, "--llm-model", args.llm_model or "unused"]
        kiosk = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        output = KioskOutput(kiosk)
        report: dict[str, Any] = {}
        try:
            port = output.port(300)
            started = time.monotonic()
            report |= asyncio.run(run(port, kiosk.pid, args.seconds, args.watchers))
            report["kiosk_closed"] = kiosk_closes(output.lines, started)
        finally:
            report["exit_code"] = stop_kiosk(kiosk)
            output.join()
        report["tracebacks"] = sum("Traceback" in line for _, line in output.lines)
        report["load_average_1_5_15"] = [round(load, 2) for load in os.getloadavg()]
        report["cpus"] = os.cpu_count()
        return report


if __name__ == "__main__":
    main()
