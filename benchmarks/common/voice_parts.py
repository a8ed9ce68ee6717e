"""Voice-to-voice in real time, split into its steps: where the time from the end of speech to the reply goes.

Used by benchmarks/voice_to_voice.py parts. Each real-time run wraps whisper, piper, the end-of-turn
model (when the tree has one) and the chat model in timers on the monotonic clock; the run's event
stream gives the room-clock times of the end of the turn (the switch to thinking), the request
(``response.created``) and the first reply audio. A real-time room's clock runs with the wall clock
from the run's start, so the two line up to within a few ms of set-up.

Parts, per turn answering the user, from the end of its speech (cue time + the WAV's ``end_s``):
``endpointing_wait_ms`` (to the first ASR or end-of-turn call on the turn's last utterance: the pause
the VAD waits before offering it), ``turn_end_decision_ms`` (from that offer to the end of the turn:
the model's judgement and the early transcript, or the rest of the long silence), ``asr_after_turn_end_ms``
(from the end of the turn to the request: whisper still running), ``llm_first_token_ms`` (request to the
first text), ``first_clause_ms`` (first text to the first chunk sent to piper), ``tts_first_audio_ms``
(piper on the first chunk), ``held_ms`` (a reply to a turn ended at a short pause waits for 500 ms of
silence: from piper done to the switch to ``speaking``) and ``playback_start_ms`` (from there to the first
sample played). They add up to ``ms``. ``model_ms`` and ``asr_ms`` are the calls' own durations (the
judgement and whisper run side by side, on their own workers).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from voice.asr.port import Transcriber
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken

PARTS = (
    "endpointing_wait_ms",
    "turn_end_decision_ms",
    "asr_after_turn_end_ms",
    "llm_first_token_ms",
    "first_clause_ms",
    "tts_first_audio_ms",
    "held_ms",
    "playback_start_ms",
)


class Timers:
    """Wall-clock spans of every call, by kind, on the monotonic clock."""

    def __init__(self) -> None:
        self.spans: dict[str, list[tuple[float, float]]] = {}
        self.first_token: list[tuple[float, float]] = []  # (request streamed, first text) per request

    def note(self, kind: str, started: float) -> None:
        self.spans.setdefault(kind, []).append((started, time.monotonic()))


class TimedCall:
    """Wraps one component's method in a timer; everything else passes through."""

    def __init__(self, inner: Any, method: str, kind: str, timers: Timers) -> None:
        self._inner, self._method, self._kind, self._timers = inner, method, kind, timers

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if name != self._method:
            return attribute

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return attribute(*args, **kwargs)
            finally:
                self._timers.note(self._kind, started)

        return timed


class TimedTranscriber:
    def __init__(self, inner: Transcriber, timers: Timers) -> None:
        self._inner, self._timers = inner, timers

    def transcribe(
        self,
        audio: AudioBlock,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: Any = None,
        context: str = "",
    ) -> Any:
        started = time.monotonic()
        try:
            # a tree older than over_reply, cancel or context (--against) is never asked them
            hint: dict[str, Any] = {"over_reply": True} if over_reply else {}
            if cancel is not None:
                hint["cancel"] = cancel
            if context:
                hint["context"] = context
            return self._inner.transcribe(audio, word_timings=word_timings, **hint)
        finally:
            self._timers.note("asr", started)


class TimedChatModel:
    """A chat model whose streams note when they started and when their first text came."""

    def __init__(self, inner: Any, timers: Timers) -> None:
        self._inner, self._timers = inner, timers

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def stream(self, request: Any, cancel: CancelToken) -> Iterator[Any]:
        started = time.monotonic()
        first = True
        for event in self._inner.stream(request, cancel):
            if first and getattr(event, "text", ""):
                self._timers.first_token.append((started, time.monotonic()))
                first = False
            yield event


def timed_models(models: Any, timers: Timers) -> Any:
    """``models`` (SpeechModels of whichever tree) with every component timed."""
    fields = {f.name for f in dataclasses.fields(models)}
    changes = {
        "transcriber": TimedTranscriber(models.transcriber, timers),
        "synthesizer": TimedCall(models.synthesizer, "synthesize", "tts", timers),
    }
    if "end_of_turn" in fields and models.end_of_turn is not None:
        changes["end_of_turn"] = TimedCall(models.end_of_turn, "probability_complete", "turn_end", timers)
    return dataclasses.replace(models, **changes)


@contextmanager
def timed_chat_models(timers: Timers) -> Iterator[None]:
    """Every chat model run_scenario opens (a real LLM) streams through a timer."""
    import voice.sim.driver as driver
    import voice.sim.run as run

    opened = run.open_chat_model
    scripted = driver.ScriptedChatModel

    @contextmanager
    def timed_open(config: Any) -> Iterator[Any]:
        with opened(config) as model:
            yield TimedChatModel(model, timers)

    def timed_scripted(*args: Any, **kwargs: Any) -> Any:
        return TimedChatModel(scripted(*args, **kwargs), timers)

    run.open_chat_model = timed_open  # type: ignore[assignment]
    driver.ScriptedChatModel = timed_scripted  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        run.open_chat_model = opened  # type: ignore[assignment]
        driver.ScriptedChatModel = scripted  # type: ignore[misc]


def events_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def turn_parts(
    out: Path, timers: Timers, started: float, turn: int, user_end: float, audio_start: float
) -> dict[str, float] | None:
    """One turn's parts in ms (room clock; timer spans moved onto it by the run's start)."""
    events = events_of(out)
    created = [e["t"] for e in events if e["type"] == "response.created" and e["turn"] == turn]
    if not created:
        return None
    request = created[0]
    thinking = [e["t"] for e in events if e.get("state") == "thinking" and user_end <= e["t"] <= request]
    turn_end = min(thinking, default=request)

    def room(wall: float) -> float:
        return wall - started

    offers = [
        room(s)
        for kind in ("asr", "turn_end")
        for s, _ in timers.spans.get(kind, [])
        if user_end - 0.05 <= room(s) <= turn_end + 0.05
    ]
    offer = min(offers, default=turn_end)
    # the first stream after the request: under load its worker may start it a while later
    tokens = sorted((room(s), room(f)) for s, f in timers.first_token if room(s) >= request - 0.05)
    tts = [(room(s), room(e)) for s, e in timers.spans.get("tts", []) if room(s) >= request - 0.02]
    if not tokens or not tts:
        return None
    first_token = tokens[0][1]
    tts_start, tts_end = tts[0]
    speaking = [e["t"] for e in events if e.get("state") == "speaking" and e["t"] >= request]
    ready = max(tts_end, speaking[0]) if speaking else tts_end
    asr = [e - s for s, e in timers.spans.get("asr", []) if user_end - 0.05 <= room(s) <= turn_end + 0.05]
    judge = [
        e - s for s, e in timers.spans.get("turn_end", []) if user_end - 0.05 <= room(s) <= turn_end + 0.05
    ]
    ms = 1000.0
    return {
        "endpointing_wait_ms": round((offer - user_end) * ms, 1),
        "turn_end_decision_ms": round((turn_end - offer) * ms, 1),
        "asr_after_turn_end_ms": round((request - turn_end) * ms, 1),
        "llm_first_token_ms": round((first_token - request) * ms, 1),
        "first_clause_ms": round((tts_start - first_token) * ms, 1),
        "tts_first_audio_ms": round((tts_end - tts_start) * ms, 1),
        "held_ms": round((ready - tts_end) * ms, 1),
        "playback_start_ms": round((audio_start - ready) * ms, 1),
        "asr_ms": round(asr[-1] * ms, 1) if asr else 0.0,
        "model_ms": round(judge[-1] * ms, 1) if judge else 0.0,
    }


def medians(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of the whole figure and of each part, over the rows."""
    with_parts = [row["parts_ms"] for row in rows if row.get("parts_ms")]
    names = [*PARTS, "asr_ms", "model_ms"]
    return {
        "n": len(rows),
        "median_ms": round(statistics.median(row["ms"] for row in rows), 1) if rows else None,
        "median_parts_ms": {
            name: round(statistics.median(part[name] for part in with_parts), 1) for name in names
        }
        if with_parts
        else None,
    }
