"""A spoken cut-in through the kiosk's page audio, alone and under misbehaving clients, as JSON.

Runs `voice kiosk --audio websocket` (real whisper and piper, the default models) twice on loopback:
first with only the talking page connected, then with ``--watchers`` (50) clients reading every event, one
that never reads (stalled) and one that floods ``input.text`` (kiosk_clients.py's). The talking page is
the kiosk's microphone and speaker over the websocket, as the browser page is: 20 ms frames of 16 kHz
s16le paced by its own clock, each answered with as much reply audio, and ``playback.position`` reported
as soon as that audio arrives (a speaker with no output latency). Over and over it does what
audio/scenarios/interrupt-mid.json does (the held-out-style cut-in): a fresh conversation
(``session.reset``), says what-weather.wav, and 2 s into the reply's audio says sorry-sunday.wav over
it. The LLM is voice/testing/stand_in_llm.py with that scenario's two replies and its pacing (300 ms to the
first delta, 40 ms between deltas), so every cycle asks for the same words.

Per run: ``barge_in_reaction_ms`` (p50/p95/max over cycles): from the cut-in's speech onset (where it
was sent + its manifest ``start_s``) to the last reply sample above -60 dBFS the page got before the
cut-in's transcript (the next reply's audio comes after it), both on the page's audio clock (each reply
sample answers the mic sample at the same index); the ``heard`` texts the interruptions kept and the
transcripts of both utterances, by count; cycles that failed and why; the kiosk's RSS and open
descriptors every 30 s. The reaction is also given without the first 3 cycles, while AEC3 still holds
the user's voice back over a reply. Per cycle, to tell why a cut-in was slow or missed: the kiosk's
notices meanwhile (a device reopen), the longest gap in the reply audio the page got (the kiosk's loop
stalled), how long session.reset took, and the events from the cut-in to the reply's end (what the
VAD saw). ``compare`` puts the two runs side by side.

Usage: PYTHONPATH=. python benchmarks/kiosk_cut_in_load.py [--seconds 600] [--baseline-seconds 600]
       [--watchers 50] [--no-echo-cancel] [--stall-loop 1.3,3.7] [--out FILE]
       (the two runs' seconds, plus about a minute to load models each; 0 seconds skips that run)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu
from kiosk_clients import (
    Flooder,
    KioskOutput,
    Watcher,
    closed_as,
    flood,
    kiosk_closes,
    sample,
    stalled_reader,
    watch,
)
from kiosk_soak import stop_kiosk
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voice.audio.wav import read_wav
from voice.testing.stand_in_llm import StandInLlm

AUDIO = Path(__file__).resolve().parents[1] / "audio"
SCENARIO = json.loads((AUDIO / "scenarios" / "interrupt-mid.json").read_text(encoding="utf-8"))
MANIFEST = {
    fixture["file"]: fixture for fixture in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]
}
QUESTION, CUT_IN = "what-weather.wav", "sorry-sunday.wav"
# Into the reply's audio, so that the cut-in's onset falls inside its first sentence (12 words, about
# 3.4 s): in the pause after it (the scenario's 5.71 s on a loaded machine) no stop can be heard.
CUT_IN_AFTER_S = 2.0
RATE = 16000
FRAME = 320  # 20 ms, as the page sends
LOUD = 10 ** (-60 / 20)  # a reply sample above -60 dBFS is sound, below it the fade's tail
STEP_LIMIT_S = 60.0  # a cycle step that takes longer failed
BETWEEN_CYCLES_S = 1.0
# AEC3 holds back the user's voice over the first replies of a kiosk's life (about 600 ms more to the
# stop; none without echo cancellation): the reaction once it has learnt the room is reported apart too
COLD_CYCLES = 3
NOTICE = "voice kiosk: "  # the kiosk's one-line notices: device reopens, audio dropped (clients closed aside)


def reply_to(question: str) -> str:
    """interrupt-mid's replies: the weather for tomorrow, then for Sunday once the user says so."""
    first, second = SCENARIO["llm"]["replies"]
    return str(second if "sunday" in question.lower() else first)


def recording(name: str) -> np.ndarray:
    return np.asarray(read_wav(AUDIO / name, RATE).samples, dtype=np.float32)


@dataclass
class Cycle:
    reaction_ms: float | None = None
    heard: str | None = None
    question_transcript: str | None = None
    cut_in_transcript: str | None = None
    answered: bool = False
    failed: str | None = None
    audio_end_ms: float | None = None  # the kiosk's own account of where the reply's audio stopped
    voice_to_voice_ms: float | None = None  # the answer to the cut-in: its response.done's measure
    ahead_ms: float | None = None  # mic audio sent past the reply audio back when the cut-in began
    started: float = 0.0  # monotonic, for the kiosk's notices during the cycle
    ended: float = 0.0
    reset_ms: float | None = None  # session.reset to session.created: the old log closed on the loop
    longest_reply_gap_ms: float | None = None  # the kiosk's loop stalls, as the page saw its audio stop
    after_cut_in: list[str] | None = None  # the events from the cut-in to the reply's end: what the VAD saw
    notices: list[str] | None = None  # what the kiosk said meanwhile (device reopens, dropped audio)


class TalkingPage:
    """The kiosk's microphone and speaker: sends frames on its own clock, takes the reply audio back."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.sent = 0  # mic samples sent: the page's audio clock
        self.received = 0  # reply samples received, each answering the mic sample at its index
        self.last_loud = -1  # index of the latest reply sample above LOUD
        self.first_loud: int | None = None  # of the reply in this cycle
        self._speech: np.ndarray | None = None
        self._spoken = 0
        self.spoke_at = 0  # index of the first sample of the last recording sent
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.kinds: list[str] = []  # every event's type, in order
        self.last_audio_at: float | None = None
        self.longest_gap_s = 0.0  # between reply audio frames, since reset
        self.arrived = asyncio.Event()  # reply audio or an event came

    def say(self, samples: np.ndarray) -> None:
        self._speech, self._spoken, self.spoke_at = samples, 0, self.sent

    @property
    def speaking(self) -> bool:
        return self._speech is not None

    async def send_frames(self, done: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while not done.is_set():
            frame = np.zeros(FRAME, dtype=np.float32)
            if self._speech is not None:
                piece = self._speech[self._spoken : self._spoken + FRAME]
                frame[: len(piece)] = piece
                self._spoken += FRAME
                if self._spoken >= len(self._speech):
                    self._speech = None
            await self.ws.send((np.clip(frame, -1, 1) * 32767).astype("<i2").tobytes())
            self.sent += FRAME
            due += FRAME / RATE
            await asyncio.sleep(max(0.0, due - loop.time()))

    async def receive(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in self.ws:
                if isinstance(message, bytes):
                    now = time.monotonic()
                    if self.last_audio_at is not None:
                        self.longest_gap_s = max(self.longest_gap_s, now - self.last_audio_at)
                    self.last_audio_at = now
                    reply = np.frombuffer(message, dtype="<i2").astype(np.float32) / 32768
                    loud = np.flatnonzero(np.abs(reply) > LOUD)
                    if loud.size:
                        self.last_loud = self.received + int(loud[-1])
                        if self.first_loud is None:
                            self.first_loud = self.received + int(loud[0])
                    self.received += reply.size
                    await self.ws.send(json.dumps({"type": "playback.position", "samples": self.received}))
                else:
                    event = json.loads(message)
                    self.kinds.append(
                        f"state:{event['state']}" if event["type"] == "state" else event["type"]
                    )
                    await self.events.put(event)
                self.arrived.set()

    async def event(
        self, kinds: set[str], wanted: Callable[[dict[str, Any]], bool] = lambda event: True
    ) -> dict[str, Any]:
        """The next event of one of ``kinds`` that is ``wanted`` (others are skipped)."""
        async with asyncio.timeout(STEP_LIMIT_S):
            while True:
                event = await self.events.get()
                if event["type"] in kinds and wanted(event):
                    return event

    async def until(self, ready: Callable[[], bool]) -> None:
        async with asyncio.timeout(STEP_LIMIT_S):
            while not ready():
                self.arrived.clear()
                await self.arrived.wait()


def spoken(event: dict[str, Any]) -> bool:
    """A transcript of what the page said (the flooder's typed lines come through too)."""
    return not str(event.get("id") or "").startswith("flood-")


async def cycle(page: TalkingPage, question: np.ndarray, cut_in: np.ndarray) -> Cycle:
    found = Cycle(started=time.monotonic())
    page.longest_gap_s = 0.0
    try:
        await page.ws.send(json.dumps({"type": "session.reset"}))
        await page.event({"session.created"})
        found.reset_ms = round((time.monotonic() - found.started) * 1000, 1)
        page.say(question)
        found.question_transcript = (await page.event({"input.transcript"}, spoken))["text"]
        turn = (await page.event({"response.created"}))["turn"]
        page.first_loud = None  # the reply's audio comes after its response.created
        await page.until(lambda: page.first_loud is not None)
        first = page.first_loud
        assert first is not None
        await page.until(lambda: page.received >= first + CUT_IN_AFTER_S * RATE)
        page.say(cut_in)
        said_at = len(page.kinds)
        found.ahead_ms = round((page.sent - page.received) / RATE * 1000, 1)
        onset = page.spoke_at + round(MANIFEST[CUT_IN]["start_s"] * RATE)
        ends = {"response.interrupted", "response.done"}
        interrupted = await page.event(ends, lambda event: event.get("turn") == turn)
        found.after_cut_in = [kind for kind in page.kinds[said_at:] if not kind.startswith("response.")]
        if interrupted["type"] == "response.done":
            found.failed = "the reply played to its end: the cut-in did not stop it"
            return found
        found.heard = interrupted["heard"]
        found.audio_end_ms = interrupted["audio_end_ms"]
        found.cut_in_transcript = (await page.event({"input.transcript"}, spoken))["text"]
        # the fade after the stop may follow the event; the next reply's audio comes after the transcript
        if page.last_loud < onset:
            found.failed = "the cut-in began in a pause of the reply's audio: no stop to hear"
        else:
            found.reaction_ms = round((page.last_loud - onset) / RATE * 1000, 1)
        ended = await page.event(ends, lambda event: event.get("turn") != turn)
        found.answered = ended["type"] == "response.done"
        found.voice_to_voice_ms = (ended.get("metrics") or {}).get("voice_to_voice_ms")
    except TimeoutError:
        found.failed = "a step took over a minute"
    found.ended = time.monotonic()
    found.longest_reply_gap_ms = round(page.longest_gap_s * 1000, 1)
    return found


async def talk(url: str, done: asyncio.Event, cycles: list[Cycle]) -> str | None:
    """Cut-in cycles until ``done`` (the one under way ends first); the page's close, if the kiosk did it."""
    question, cut_in = recording(QUESTION), recording(CUT_IN)
    try:
        async with connect(url, max_size=None) as ws:
            await ws.recv()  # the snapshot
            page = TalkingPage(ws)
            receiving = asyncio.create_task(page.receive())
            finished = asyncio.Event()
            sending = asyncio.create_task(page.send_frames(finished))
            await asyncio.sleep(BETWEEN_CYCLES_S)
            while not done.is_set() and not receiving.done():
                cycles.append(await cycle(page, question, cut_in))
                await asyncio.sleep(BETWEEN_CYCLES_S)
            finished.set()
            await sending
            await ws.close()
            await receiving
    except ConnectionClosed as closed:
        return closed_as(closed)
    return None


async def talk_for(url: str, seconds: float, cycles: list[Cycle]) -> None:
    """Cut-in cycles for ``seconds`` (the one under way ends first), each appended to ``cycles``."""
    done = asyncio.Event()
    talking = asyncio.create_task(talk(url, done, cycles))
    await asyncio.sleep(seconds)
    done.set()
    await talking


async def crowd(port: int, watchers_wanted: int, finish: Any, out: Any) -> None:
    """The misbehaving clients until ``finish`` is set; says "ready" on ``out`` once all are there, then
    its figures. Run in a process of its own, so the talking page's clock never waits on their loop."""
    url = f"ws://127.0.0.1:{port}/ws"
    stop = asyncio.Event()
    watchers = [Watcher() for _ in range(watchers_wanted)]
    watching = [asyncio.create_task(watch(url, stop, watcher)) for watcher in watchers]
    await asyncio.sleep(1.0)
    stalled = await asyncio.to_thread(stalled_reader, port)
    flooder = Flooder()
    flooding = asyncio.create_task(flood(url, stop, flooder))
    out.put("ready")
    await asyncio.to_thread(finish.wait)
    stop.set()
    await flooding
    await asyncio.gather(*watching)
    stalled.close()
    kept = [watcher for watcher in watchers if watcher.closed is None]
    out.put({
        "watchers": {
            "count": len(watchers),
            "dropped": len(watchers) - len(kept),
            "closed_as": dict(Counter(watcher.closed for watcher in watchers if watcher.closed)),
            "all_got_the_same_events": len({watcher.digest.hexdigest() for watcher in kept}) <= 1,
            "events_each": sorted({watcher.events for watcher in kept}),
        },
        "flooder": flooder.figures(watchers[0]),
    })  # fmt: skip


def crowd_process(port: int, watchers_wanted: int, finish: Any, out: Any) -> None:
    asyncio.run(crowd(port, watchers_wanted, finish, out))


async def run(
    port: int, pid: int, seconds: float, watchers_wanted: int, said: list[tuple[float, str]]
) -> dict[str, Any]:
    url = f"ws://127.0.0.1:{port}/ws"
    done, all_gone = asyncio.Event(), asyncio.Event()
    started = time.monotonic()
    samples: list[dict[str, Any]] = []
    sampler = asyncio.create_task(sample(pid, started, all_gone, samples))
    spawn = multiprocessing.get_context("spawn")
    finish, out = spawn.Event(), spawn.Queue()
    others = None
    if watchers_wanted:
        others = spawn.Process(target=crowd_process, args=(port, watchers_wanted, finish, out))
        others.start()
        if await asyncio.to_thread(out.get, True, 120) != "ready":
            raise RuntimeError("the crowd of clients did not start")
    cycles: list[Cycle] = []
    talking = asyncio.create_task(talk(url, done, cycles))
    await asyncio.sleep(seconds)
    done.set()
    page_closed = await talking
    crowd_figures: dict[str, Any] = {}
    if others is not None:
        finish.set()
        crowd_figures = await asyncio.to_thread(out.get, True, 120)
        await asyncio.to_thread(others.join, 30)
    await asyncio.sleep(1.0)  # the last sample: every client gone
    all_gone.set()
    await sampler
    for found in cycles:
        during = [line for at, line in list(said) if found.started <= at <= found.ended]
        found.notices = [line for line in during if NOTICE in line and "closing a client" not in line]
    return summarize(cycles, page_closed, samples, seconds) | crowd_figures


def summarize(
    cycles: list[Cycle], page_closed: str | None, samples: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    reactions = sorted(found.reaction_ms for found in cycles if found.reaction_ms is not None)
    warm = sorted(found.reaction_ms for found in cycles[COLD_CYCLES:] if found.reaction_ms is not None)
    cut = [found for found in cycles if found.heard is not None]
    ahead = [found.ahead_ms for found in cycles if found.ahead_ms is not None]
    rss = [row["kiosk_rss_mb"] for row in samples]
    descriptors = [row["kiosk_fds"] for row in samples if row["kiosk_fds"] is not None]
    return {
        "seconds": seconds,
        "cycles": len(cycles),
        "barge_in_reaction_ms": {
            "n": len(reactions),
            "p50": statistics.median(reactions) if reactions else None,
            "p95": reactions[round(0.95 * (len(reactions) - 1))] if reactions else None,
            "max": reactions[-1] if reactions else None,
        },
        f"barge_in_reaction_ms_after_the_first_{COLD_CYCLES}": {
            "n": len(warm),
            "p50": statistics.median(warm) if warm else None,
            "p95": warm[round(0.95 * (len(warm) - 1))] if warm else None,
            "max": warm[-1] if warm else None,
        },
        "heard": dict(Counter(found.heard for found in cut)),
        "question_transcripts": dict(Counter(found.question_transcript for found in cycles)),
        "cut_in_transcripts": dict(Counter(found.cut_in_transcript for found in cut)),
        "answered_after_cut_in": sum(found.answered for found in cycles),
        "failed": dict(Counter(found.failed for found in cycles if found.failed is not None)),
        "page_closed": page_closed,
        "page_ahead_of_its_reply_ms": {
            "median": statistics.median(ahead) if ahead else None,
            "max": max(ahead, default=None),
        },
        "kiosk_rss_mb": {"first": rss[0], "max": max(rss), "last_with_clients": rss[-2], "after": rss[-1]},
        "kiosk_fds": {"first": descriptors[0], "max": max(descriptors), "after": descriptors[-1]},
        "samples_every_30_s": samples,
        "each_cycle_reaction_audio_end_words_heard_failed": [
            [found.reaction_ms, found.audio_end_ms, len((found.heard or "").split()), found.failed]
            for found in cycles
        ],
        "each_cycle_reset_ms_longest_reply_gap_ms_events_after_cut_in_notices": [
            [found.reset_ms, found.longest_reply_gap_ms, found.after_cut_in, found.notices]
            for found in cycles
        ],
        "cycles_with_a_device_reopen": sum(
            any("reopening" in line for line in found.notices or []) for found in cycles
        ),
    }


def measure(
    seconds: float, watchers: int, echo_cancel: bool = True, stall: tuple[float, float] | None = None
) -> dict[str, Any]:
    """One kiosk, one run of cycles; the crowd of clients if ``watchers``; its loop blocked for
    ``stall`` = (seconds, every seconds) if given."""
    paced = SCENARIO["llm"]["first_delta_ms"] / 1000, SCENARIO["llm"]["delta_ms"] / 1000
    with tempfile.TemporaryDirectory() as folder, StandInLlm(reply_to, *paced) as llm:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
        env |= {"XDG_STATE_HOME": folder, "XDG_CONFIG_HOME": f"{folder}/config"}
        if stall is not None:  # the kiosk alone loads common/loop_stall/sitecustomize.py
            paths = [str(Path(__file__).parent / "common" / "loop_stall"), env.get("PYTHONPATH", "")]
            env |= {"PYTHONPATH": os.pathsep.join(filter(None, paths)),
                    "BENCH_STALL_S": str(stall[0]), "BENCH_STALL_EVERY_S": str(stall[1])}  # fmt: skip
        command = [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", "websocket",
                   "--sessions", f"{folder}/sessions",
                   "--llm-url", llm.url, "--llm-model", "stand-in",
                   "--echo-cancel" if echo_cancel else "--no-echo-cancel"]  # fmt: skip
        kiosk = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        output = KioskOutput(kiosk, ready_line="audio devices open")
        report: dict[str, Any] = {
            "extra_clients": f"{watchers} watchers, 1 stalled, 1 flooding" if watchers else "none"
        }
        try:
            port = output.port(600)
            started = time.monotonic()
            report |= asyncio.run(run(port, kiosk.pid, seconds, watchers, output.lines))
            report["kiosk_closed"] = kiosk_closes(output.lines, started)
        except Exception as exc:  # the run's figures are lost, but not what the kiosk said
            report["benchmark_error"] = f"{type(exc).__name__}: {exc}"
            report["kiosk_output_tail"] = [line for _, line in output.lines[-40:]]
        finally:
            report["exit_code"] = stop_kiosk(kiosk)
            output.join()
        report["llm_requests"] = llm.requests
        report["tracebacks"] = sum("Traceback" in line for _, line in output.lines)
        report["load_average_1_5_15"] = [round(load, 2) for load in os.getloadavg()]
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="the run with the extra clients")
    parser.add_argument("--baseline-seconds", type=float, default=600.0, help="without them (0: none)")
    parser.add_argument("--watchers", type=int, default=50)
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    parser.add_argument(
        "--echo-cancel", action=argparse.BooleanOptionalAction, default=True, help="the kiosk's AEC3"
    )
    parser.add_argument(
        "--stall-loop",
        metavar="SECONDS,EVERY",
        help="block the kiosk's asyncio loop for SECONDS every EVERY seconds (a loop stalled under load)",
    )
    args = parser.parse_args()
    stall = tuple(float(part) for part in args.stall_loop.split(",")) if args.stall_loop else None
    if stall is not None and len(stall) != 2:
        parser.error("--stall-loop takes SECONDS,EVERY")
    alone = measure(args.baseline_seconds, 0, args.echo_cancel, stall) if args.baseline_seconds else {}
    crowded = measure(args.seconds, args.watchers, args.echo_cancel, stall) if args.seconds else {}

    def both(*keys: str) -> list[Any]:
        found = []
        for run in (alone, crowded):
            for key in keys:
                run = run.get(key, {}) if isinstance(run, dict) else {}
            found.append(run if run != {} else None)
        return found

    result = {
        "llm": "voice/testing/stand_in_llm.py with audio/scenarios/interrupt-mid.json's replies and pacing",
        "cpus": os.cpu_count(),
        "echo_cancel": args.echo_cancel,
        "kiosk_loop_stalled_s_every_s": stall,
        "compare": {
            "order": "[without extra clients, with them]",
            "reaction_p50_ms": both("barge_in_reaction_ms", "p50"),
            "reaction_p95_ms": both("barge_in_reaction_ms", "p95"),
            f"reaction_p95_ms_after_the_first_{COLD_CYCLES}": both(
                f"barge_in_reaction_ms_after_the_first_{COLD_CYCLES}", "p95"
            ),
            "failed": both("failed"),
            "cycles": both("cycles"),
            "heard": both("heard"),
            "cut_in_transcripts": both("cut_in_transcripts"),
            "kiosk_rss_mb": both("kiosk_rss_mb"),
            "kiosk_fds": both("kiosk_fds"),
        },
        "without_extra_clients": alone,
        "with_extra_clients": crowded,
    }
    text = json.dumps(with_cpu(result), indent=2)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
