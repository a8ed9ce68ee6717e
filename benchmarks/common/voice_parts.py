"""Voice-to-voice in real time, split into its steps: where the time from the end of speech to the reply goes.

Measured by ``voice_to_voice_parts``, for benchmarks/voice_to_voice.py parts and bars.py. Each real-time
run wraps whisper, piper, the end-of-turn model (when the tree has one) and the chat model in timers on
the monotonic clock; the run's event stream gives the room-clock times of the end of the turn (the switch
to thinking), the request (``response.created``) and the first reply audio. A real-time room's clock runs
with the wall clock from the run's start, so the two line up to within a few ms of set-up.

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

from common.scenario_runs import (
    LOCAL_MAX_TOKENS,
    LOCAL_RUNS,
    Run,
    at_once_variant,
    latency_row,
    load_manifest,
    progress,
    reply_delays,
)
from voice.asr.port import Transcriber
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken
from voice.components import SpeechModels
from voice.config.llm import LlmConfig, resolve_llm_config
from voice.llm.embedded_server import EmbeddedServer
from voice.sim.demo_scenario import demo_scenario
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm, load_scenario

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


# --- the figures of voice_to_voice.py parts (and of bars.py): scripted LLM at once, and embedded


AT_ONCE_SCENARIOS = ("plain-turn", "pause-mid-sentence", "pause-mid-question")
AT_ONCE_RUNS = 2


def parts_rows(
    report: dict[str, Any], out: Path, timers: Timers, run_started: float, **label: Any
) -> list[dict[str, Any]]:
    rows = []
    run = Run(out.name, report, out, None)
    for index, (user_end, audio_start) in reply_delays(run, load_manifest()).items():
        rows.append(
            {
                **label,
                **latency_row(index, user_end, audio_start),
                "parts_ms": turn_parts(out, timers, run_started, index, user_end, audio_start),
            }
        )
    return rows


def eagerness_kwargs(eagerness: str | None) -> dict[str, Any]:
    """``run_scenario``'s eagerness, when one is asked for (a tree from before the setting takes none)."""
    if eagerness is None:
        return {}
    from voice.engine.hold import Eagerness

    return {"eagerness": Eagerness(eagerness)}


def voice_to_voice_parts(
    models: SpeechModels,
    work: Path,
    started: float,
    eagerness: str | None = None,
    embedded_only: bool = False,
    scripted_only: bool = False,
) -> dict[str, Any]:
    """Voice-to-voice medians over real-time runs, scripted LLM at once and embedded, split into steps."""
    variants = work / "at-once-scenarios"
    variants.mkdir(parents=True, exist_ok=True)
    scripted: list[dict[str, Any]] = []
    for name in () if embedded_only else AT_ONCE_SCENARIOS:
        path = at_once_variant(name, variants)
        for number in range(1, AT_ONCE_RUNS + 1):
            progress(f"voice to voice, LLM at once: {name} run {number}/{AT_ONCE_RUNS}", started)
            out = work / "v2v-at-once" / f"{name}-{number}"
            scripted += timed_run(load_scenario(path), out, models, eagerness, scenario=name, run=number)
    embedded: list[dict[str, Any]] = []
    if not scripted_only:
        embedded_config = resolve_llm_config(None, None, None, {})
        progress("voice to voice, embedded LLM: starting the llama.cpp server", started)
        with EmbeddedServer(embedded_config.gguf, model=embedded_config.model) as server:
            served = LlmConfig(url=server.url, model=server.model)
            for number in range(1, LOCAL_RUNS + 1):
                progress(f"voice to voice, embedded LLM: demo run {number}/{LOCAL_RUNS}", started)
                scenario = demo_scenario(RealLlm(None, None, max_tokens=LOCAL_MAX_TOKENS))
                out = work / "v2v-embedded" / f"demo-{number}"
                embedded += timed_run(scenario, out, models, eagerness, served, run=number)
    return {
        "scripted_at_once": {**medians(scripted), "turns": scripted},
        "embedded": embedded_medians(embedded),
    }


def timed_run(
    scenario: Any,
    out: Path,
    models: Any,
    eagerness: str | None,
    llm_config: Any = None,
    /,
    **label: Any,  # the rows' own keys, ``scenario`` among them: hence the positional parameters
) -> list[dict[str, Any]]:
    """One real-time run of ``scenario`` with every component timed: its turns' rows with their parts."""
    timers = Timers()
    out.mkdir(parents=True)
    served = {} if llm_config is None else {"llm_config": llm_config}
    with timed_chat_models(timers):
        run_started = time.monotonic()
        report = run_scenario(
            scenario,
            out,
            realtime=True,
            models=timed_models(models, timers),
            **served,
            **eagerness_kwargs(eagerness),
        )
    return parts_rows(report, out, timers, run_started, **label)


def embedded_medians(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over every embedded turn, and apart for the question (turn 1) and the cut-in (turn 2)."""
    return {
        **medians(turns),
        "question": medians([row for row in turns if row["turn"] == 1]),
        "cut_in": medians([row for row in turns if row["turn"] == 2]),
        "turns": turns,
    }
