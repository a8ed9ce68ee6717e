"""Does a long session stay flat? Thousands of turns in virtual time, printed as JSON (issue: conversations
that last).

The engine, the conversation with its context budget, the action runner, the playback buffer and the
session log are the real ones; the user, whisper, piper and the LLM are fast stand-ins, so 5,000 turns
take minutes, not hours. The mix cycles through a plain answer, an interruption mid-reply, speech
merged before anything was heard, a tool call, an LLM failure after some words, a typed input and its
duplicate, and a cough over the reply. Reported:

- ``rss_mb``: resident memory at the start (after a warm-up of 200 turns) and the end, and the growth;
- ``structures``: what the engine and conversation hold (utterances awaited, held inputs, history) at the
  start and the end;
- ``grown_objects``: the types whose count of live objects grew the most from start to end (bar: none
  grows with the turns), counted by the garbage collector rather than by reaching into each part;
- ``exceptions``: raised anywhere in the loop (bar: none);
- ``block_ms``: p50 / p95 / max of handling one 20 ms mic block (runner.feed, log writes included).

Usage: python benchmarks/long_session.py [--turns 5000]   (about 3 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import VadEvent, VoiceEnded, VoiceStarted
from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation, Request
from voice.conversation.items import ToolCall, ToolResult
from voice.conversation.session_log import SessionLog
from voice.engine.engine import Engine
from voice.engine.inputs import LlmDone, LlmFailed, LlmText, LlmToolCall, MicAudio, TextInput, ToolDone
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.prompt import SPEECH_SYSTEM_PROMPT
from voice.runtime import ActionRunner, Work
from voice.testing.stand_ins import EvenSynthesizer, Hears, ScriptedVad

BLOCK = ENGINE_RATE // 50
REPLY = "Tomorrow starts dry, then rain moves in from the west in the afternoon, so take an umbrella."
WARM_UP_TURNS = 200
BLOCK_TIMES_KEPT = 500_000  # the latest block times (about 3 hours of virtual audio)


class InstantThinker:
    """Answers every request at once with the next scripted reply: text, a tool call or a failure."""

    def __init__(self, work: Work) -> None:
        self._work = work
        self.next_reply = "text"
        self.requests = 0

    def send(self, request: Request, delay_s: float) -> None:
        self.requests += 1
        turn = request.turn
        words = [f" {word}" for word in REPLY.split()]
        if self.next_reply == "tool":
            self._work.inbox.put(LlmText(turn, "Let me check."))
            self._work.inbox.put(LlmToolCall(turn, ToolCall(f"c{turn}", "forecast", {"day": turn})))
            self._work.inbox.put(LlmDone(turn))
            self.next_reply = "text"
            return
        for word in words:
            self._work.inbox.put(LlmText(turn, word))
        if self.next_reply == "fail":
            error = LLMError(ErrorCode.TRANSPORT, Dispatch.ACCEPTED, "reset", retriable=True)
            self._fail = LlmFailed(turn, error)  # delivered once some words were heard
        else:
            self._work.inbox.put(LlmDone(turn))
        self.next_reply = "text"

    def fail_now(self) -> None:
        self._work.inbox.put(self._fail)

    def stop_turn(self, turn: int, reason: str = "") -> None:
        pass

    def run_tool(self, turn: int, call: ToolCall) -> None:
        self._work.inbox.put(ToolDone(turn, ToolResult(call.id, "Dry, fourteen degrees.")))


class Session:
    """The real engine, conversation, runner, buffer and log, driven block by block."""

    def __init__(self, log: SessionLog) -> None:
        self.vad = ScriptedVad()
        self.transcriber = Hears("")
        self.work = Work(threaded=False)
        self.thinker = InstantThinker(self.work)
        budget = ContextBudget.for_model(2048, 150, SPEECH_SYSTEM_PROMPT)
        self.engine = Engine(self.vad, Conversation(budget))
        self.buffer = PlaybackBuffer(ENGINE_RATE)
        self.runner = ActionRunner(
            self.engine, self.transcriber, EvenSynthesizer(), self.thinker, self.work, self.buffer, log
        )
        self.clock = 0
        self.block_s = np.zeros(BLOCK_TIMES_KEPT)  # allocated up front: the soak must not grow itself
        self.blocks = 0
        self.inputs = 0

    def tick(self, *events: VadEvent) -> None:
        self.vad.next_events = list(events)
        started = time.perf_counter()
        self.buffer.pull(BLOCK)
        self.clock += BLOCK
        self.runner.report_progress(self.buffer.audio_played_to, self.clock)
        self.runner.feed(MicAudio(AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, self.clock - BLOCK)))
        self.block_s[self.blocks % BLOCK_TIMES_KEPT] = time.perf_counter() - started
        self.blocks += 1

    def say(self, text: str) -> None:
        self.transcriber.text = text
        start = self.clock
        self.tick(VoiceStarted(start))
        for _ in range(10):
            self.tick()
        utterance = AudioBlock(np.zeros(self.clock - start, np.float32), ENGINE_RATE, start)
        self.tick(VoiceEnded(self.clock, utterance))

    def type(self, text: str, input_id: str) -> None:
        self.runner.feed(TextInput(text, input_id))

    def wait(self, seconds: float) -> None:
        for _ in range(round(seconds * 50)):
            self.tick()

    def until_quiet(self) -> None:
        while self.engine.active_turn is not None or self.buffer.is_playing:
            self.tick()

    def one_turn(self, kind: int) -> None:
        """One exchange of the mix; ``kind`` cycles 0..7."""
        self.inputs += 1
        question = f"Question {self.inputs}: what will the weather be like on day {self.inputs}?"
        if kind == 1:  # cut in mid-reply
            self.say(question)
            self.wait(2.0)
            self.say("Sorry, I meant on Sunday.")
        elif kind == 2:  # talked on before anything was heard: merged
            self.say(question)
            self.say("in Paris")
        elif kind == 3:
            self.thinker.next_reply = "tool"
            self.say(question)
        elif kind == 4:  # the model fails after some words were heard
            self.thinker.next_reply = "fail"
            self.say(question)
            self.wait(1.0)
            self.thinker.fail_now()
        elif kind == 5:  # typed, then the client's retry of it
            self.type(question, f"typed-{self.inputs}")
            self.wait(1.0)
            self.type(question, f"typed-{self.inputs}")
        elif kind == 6:  # a cough over the reply
            self.say(question)
            self.wait(1.5)
            self.say("[coughing]")
        else:
            self.say(question)
        self.until_quiet()
        self.wait(0.2)


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


def structures(session: Session) -> dict[str, int]:
    """What the engine and conversation say they hold, through their public names."""
    engine = session.engine
    return {
        "engine.utterances_awaited": engine.utterances.transcribing,
        "engine.held_inputs": len(engine.held),
        "conversation.history": len(engine.conversation.history),
    }


def live_objects() -> Counter[str]:
    """Live objects the collector tracks, by type: any collection the session grows shows up here,
    owned by whatever part, without reaching into it."""
    gc.collect()
    return Counter(type(found).__qualname__ for found in gc.get_objects())


def grown(start: Counter[str], end: Counter[str], most: int = 10) -> dict[str, list[int]]:
    """The types whose live count grew the most over the soak: [start, end]."""
    growth = sorted(((end[name] - start[name], name) for name in end), reverse=True)
    return {name: [start[name], end[name]] for more, name in growth[:most] if more > 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    args = parser.parse_args()
    exceptions: list[str] = []
    with tempfile.TemporaryDirectory() as folder, SessionLog.create(Path(folder) / "soak.jsonl") as log:
        session = Session(log)
        for turn in range(WARM_UP_TURNS):
            session.one_turn(turn % 8)
        start_objects = live_objects()
        start_rss, start_structures = rss_mb(), structures(session)
        session.blocks = 0
        started = time.perf_counter()
        for turn in range(args.turns):
            try:
                session.one_turn(turn % 8)
            except Exception as exc:  # counted, and the soak goes on: one failure must not hide others
                exceptions.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            if turn % 500 == 499:
                print(f"{turn + 1} turns, {rss_mb():.1f} MB", file=sys.stderr, flush=True)
        end_objects = live_objects()
        end_rss = rss_mb()  # before the percentiles below allocate their own lists
        blocks_ms = sorted(session.block_s[: min(session.blocks, BLOCK_TIMES_KEPT)] * 1000)
        result: dict[str, Any] = {
            "turns": args.turns,
            "requests": session.thinker.requests,
            "virtual_hours": round(session.clock / ENGINE_RATE / 3600, 2),
            "wall_s": round(time.perf_counter() - started, 1),
            "rss_mb": {"start": round(start_rss, 1), "end": round(end_rss, 1)},
            "structures": {"start": start_structures, "end": structures(session)},
            "grown_objects": grown(start_objects, end_objects),
            "log_mb": round((Path(folder) / "soak.jsonl").stat().st_size / 1e6, 1),
            "exceptions": exceptions[:10],
            "exception_count": len(exceptions),
            "block_ms": {
                "p50": round(statistics.median(blocks_ms), 3),
                "p95": round(blocks_ms[int(0.95 * len(blocks_ms))], 3),
                "max": round(blocks_ms[-1], 3),
            },
        }
    result["rss_mb"]["growth"] = round(result["rss_mb"]["end"] - result["rss_mb"]["start"], 1)
    print(json.dumps(with_cpu(result), indent=2))
    return 0 if not exceptions else 1


if __name__ == "__main__":
    raise SystemExit(main())
