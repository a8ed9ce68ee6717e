"""The kiosk's talking page: a websocket client that is the kiosk's microphone and speaker, as the browser
page is, and says audio/scenarios/interrupt-mid.json's cut-in over the reply, cycle after cycle.

20 ms frames of 16 kHz s16le paced by the page's own clock, each answered with as much reply audio, and
``playback.position`` reported as soon as that audio arrives (a speaker with no output latency). A cycle
starts a fresh conversation (``session.reset``), says what-weather.wav, and 2 s into the reply's audio
says sorry-sunday.wav over it; the LLM behind the kiosk is to answer with ``reply_to``. Used by
kiosk_cut_in_load.py, telemetry_overhead.py and dashboard_panels.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voice.audio.wav import read_wav


def closed_as(closed: ConnectionClosed) -> str:
    """How the kiosk closed a client: its close frame's code and reason."""
    return "no close frame" if closed.rcvd is None else f"{closed.rcvd.code} {closed.rcvd.reason}"


AUDIO = Path(__file__).resolve().parents[2] / "audio"
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
