"""Kiosk soak: typed turns with random stops against a real `voice kiosk` and the embedded LLM, as JSON.

Starts `voice kiosk` (``--audio none``, or ``--audio device`` on a private PulseAudio null sink) with
the embedded SmolLM2 server, connects one websockets client and sends ``--turns`` typed questions; in
about half of them a ``response.cancel`` cuts the reply after a random number of heard words. Each turn
ends at ``response.done`` or ``response.interrupted`` (or an ``error`` that ends it).

Reported: the kiosk's resident memory (and the model server's) after the first turns, every 20 turns
and at the end; dropped events (a turn without its transcript, created or end event, a caption whose
text does not extend the last one shown, a stop whose interruption kept a different prefix than the
last shown); self-interruptions (a reply interrupted though the client never stopped it: on the device
loop, its own echo); caption steps of more than one word (one ``response.heard`` may pass several word
ends when the audio thread was held up) with the largest; every ``error`` event by code; every
traceback or unexpected line the kiosk printed, and ALSA's underrun notices counted apart; the time per
turn and the machine's load average.

With ``--stand-in-llm`` the replies come from a scripted OpenAI-compatible server on loopback
(voice/testing/stand_in_llm.py: short fixed replies, streamed over real HTTP) instead of SmolLM2, so a
turn costs its reply's playback (``--audio none`` plays at a reading pace, about 0.2 s a syllable, on the
wall clock) and little else. ``--sample-every-s`` (30) samples the kiosk's RSS and descriptors on the wall
clock; ``rss_after_10_min`` compares the first sample at or past ten minutes with the last.
``--tracemalloc`` runs the kiosk under tracemalloc and reports the Python allocations that grew most
between ten minutes and the end (by line); it slows the kiosk, so it is for finding a cause, not for
the figure. ``--out FILE`` writes the JSON there too.

Usage: python benchmarks/kiosk_soak.py [--turns 200] [--audio none|device] [--seed 1] [--stand-in-llm]
       [--stop-share 0.5] [--stop-words 1 8] [--max-minutes M] [--out FILE] [--against TREE]
       (about 5-10 s per turn on 2 cores with SmolLM2; 1-2 s with the stand-in)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from common.harness import common_options, print_measured
from common.kiosk_process import children_of, fds, rss_kb, stop_kiosk
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voice.audio.pulse import private_pulse
from voice.testing.stand_in_llm import StandInLlm

QUESTIONS = (
    "What is a fox?", "Tell me about the weather in spring.", "Name three colours.",
    "What do cats eat?", "Tell me a short story about a boat.", "Why is the sky blue?",
)  # fmt: skip
TURN_LIMIT_S = 180.0
UNDERRUN = re.compile(r"^ALSA lib .*underrun occurred")
EXPECTED = re.compile(r"^(kiosk: |voice kiosk: (audio devices open|closing a client)|loading whisper)")
TEN_MINUTES_S = 600.0
# Runs `python -m voice` under tracemalloc; SIGUSR1 dumps a snapshot to the next numbered file.
UNDER_TRACEMALLOC = """
import os, runpy, signal, sys, tracemalloc
tracemalloc.start(8)
dumps = [0]
def dump(signum, frame):
    dumps[0] += 1
    path = os.path.join(os.environ["SOAK_SNAPSHOTS"], f"{dumps[0]}.snap")
    tracemalloc.take_snapshot().dump(path + ".part")
    os.rename(path + ".part", path)
signal.signal(signal.SIGUSR1, dump)
sys.argv = ["voice", *sys.argv[1:]]
runpy.run_module("voice", run_name="__main__", alter_sys=True)
"""


class Soak:
    def __init__(
        self, ws: ClientConnection, seed: int, stop_share: float, stop_words: tuple[int, int]
    ) -> None:
        self.ws = ws
        self.random = random.Random(seed)
        self.stop_share = stop_share
        self.stop_words = stop_words
        self.errors: Counter[str] = Counter()
        self.dropped: list[str] = []
        self.self_interruptions: list[str] = []
        self.caption_steps: list[int] = []
        self.turn_s: list[float] = []
        self.ended: Counter[str] = Counter()
        self.recent: deque[str] = deque(maxlen=20)  # the latest events, to say where a stuck turn stood

    async def next(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), TURN_LIMIT_S))
        self.recent.append(" ".join(str(event.get(key, "")) for key in ("type", "state", "words", "message")))
        if event["type"] == "error":
            self.errors[event["code"]] += 1
        return event

    async def turn(self, number: int) -> None:
        started = time.monotonic()
        input_id = f"soak-{number}"
        stop_after = self.random.randint(*self.stop_words) if self.random.random() < self.stop_share else None
        await self.ws.send(
            json.dumps({"type": "input.text", "id": input_id, "text": self.random.choice(QUESTIONS)})
        )
        seen: set[str] = set()
        shown, words, stopped = "", 0, False
        while True:
            event = await self.next()
            kind = event["type"]
            seen.add(kind)
            if kind == "response.heard":
                if event["words"] <= words or not event["text"].startswith(shown):
                    self.dropped.append(f"turn {number}: caption {event['text']!r} after {shown!r}")
                elif event["words"] > words + 1:
                    self.caption_steps.append(event["words"] - words)
                shown, words = event["text"], event["words"]
                if stop_after is not None and words >= stop_after and not stopped:
                    stopped = True
                    await self.ws.send(json.dumps({"type": "response.cancel"}))
            elif kind == "response.interrupted":
                if not stopped:
                    self.self_interruptions.append(f"turn {number}: after {event['heard']!r}")
                elif event["heard"] != shown:
                    self.dropped.append(f"turn {number}: kept {event['heard']!r}, last shown {shown!r}")
                self.ended["interrupted"] += 1
                break
            elif kind == "response.done":
                self.ended["done"] += 1
                break
            elif kind == "error" and "response.created" in seen and not event.get("retriable"):
                self.ended["failed"] += 1
                break
        for wanted in ("input.transcript", "response.created"):
            if wanted not in seen:
                self.dropped.append(f"turn {number}: no {wanted}")
        await self._settle()
        self.turn_s.append(time.monotonic() - started)

    async def _settle(self) -> None:
        """Wait for the kiosk to be listening again (a failure notice may still be read out)."""
        while True:
            event = await self.next()
            if event["type"] == "state" and event["state"] in {"listening", "muted", "asleep"}:
                return


class Sampler:
    """The kiosk's RSS and descriptors every ``every_s`` on the wall clock, from a thread of its own."""

    def __init__(self, pid: int, every_s: float, snapshots: Path | None) -> None:
        self.pid = pid
        self.every_s = every_s
        self.snapshots = snapshots  # the kiosk runs under tracemalloc: ask for a snapshot at 10 min
        self.turns = 0
        self.samples: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asked = False
        while True:
            self.sample()
            if self.snapshots is not None and not asked and self.elapsed() >= TEN_MINUTES_S:
                asked = True
                os.kill(self.pid, signal.SIGUSR1)
            if self._done.wait(self.every_s):
                return

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def sample(self) -> None:
        self.samples.append({
            "t_s": round(self.elapsed()),
            "turns": self.turns,
            "kiosk_rss_mb": round((rss_kb(self.pid) or 0) / 1024, 1),
            "kiosk_fds": fds(self.pid),
            "llm_rss_mb": round((_llm_rss(self.pid) or 0) / 1024, 1),
        })  # fmt: skip

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.sample()


def rss_after_ten_minutes(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The first sample at or past ten minutes against the last: the issue's flat-memory figure."""
    later = [sample for sample in samples if sample["t_s"] >= TEN_MINUTES_S]
    if len(later) < 2:
        return {"note": "the run was shorter than ten minutes and one sample"}
    first, last = later[0], later[-1]
    return {
        "at_10_min_mb": first["kiosk_rss_mb"],
        "at_end_mb": last["kiosk_rss_mb"],
        "growth_mb": round(last["kiosk_rss_mb"] - first["kiosk_rss_mb"], 1),
        "max_mb": max(sample["kiosk_rss_mb"] for sample in later),
        "over_s": last["t_s"] - first["t_s"],
        "fds_at_10_min_and_end": [first["kiosk_fds"], last["kiosk_fds"]],
    }


async def soak(url: str, args: argparse.Namespace, sampler: Sampler) -> dict[str, Any]:
    kiosk_pid = sampler.pid
    deadline = time.monotonic() + args.max_minutes * 60 if args.max_minutes else None
    async with connect(url, max_size=None) as ws:
        snapshot = json.loads(await ws.recv())
        run = Soak(ws, args.seed, args.stop_share, tuple(args.stop_words))
        rss_early: dict[str, int | None] = {}
        rss_every_20: list[dict[str, int | None]] = []
        stuck: dict[str, Any] | None = None  # a turn that got no event for TURN_LIMIT_S ends the soak
        for number in range(1, args.turns + 1):
            if deadline is not None and time.monotonic() > deadline:
                break
            try:
                await run.turn(number)
            except TimeoutError:
                stuck = {"turn": number, "last_events": list(run.recent), "state_a_new_client_sees": None}
                with contextlib.suppress(OSError, TimeoutError, ConnectionClosed):
                    async with connect(url) as fresh:
                        snapshot_now = json.loads(await asyncio.wait_for(fresh.recv(), 10))
                        stuck["state_a_new_client_sees"] = snapshot_now["state"]
                break
            sampler.turns = number
            if number == min(10, args.turns):  # caches and the model warmed up
                rss_early = {"kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)}
            if number % 20 == 0:
                rss_every_20.append({"turn": number, "kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)})
        rss_end = {"kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)}
    return {
        "stuck": stuck,
        "session": snapshot["session"],
        "turns_asked": args.turns,
        "turns_done": sampler.turns,
        "ended": dict(run.ended),
        "dropped_events": run.dropped[:50],
        "dropped_event_count": len(run.dropped),
        "self_interruptions": run.self_interruptions[:50],
        "caption_steps_over_one_word": {
            "count": len(run.caption_steps),
            "largest": max(run.caption_steps, default=0),
        },
        "errors_by_code": dict(run.errors),
        "rss_kb_after_warm_up": rss_early,
        "rss_kb_at_end": rss_end,
        "rss_kb_every_20_turns": rss_every_20 if args.turns <= 400 else rss_every_20[::10],
        "kiosk_rss_growth_kb": (rss_end["kiosk"] or 0) - (rss_early.get("kiosk") or 0),
        "turn_s": {
            "median": round(sorted(run.turn_s)[len(run.turn_s) // 2], 2),
            "max": round(max(run.turn_s), 2),
        },
        "load_average_1_5_15": [round(load, 2) for load in os.getloadavg()],
    }


def grown_allocations(snapshots: Path, kiosk_pid: int) -> list[str]:
    """The lines whose Python allocations grew most from the 10-minute snapshot to the end's."""
    import tracemalloc

    os.kill(kiosk_pid, signal.SIGUSR1)
    end = snapshots / "2.snap"
    for _ in range(600):
        if end.exists():
            break
        time.sleep(0.5)
    start = snapshots / "1.snap"
    if not start.exists() or not end.exists():
        return ["no snapshots (the run was shorter than ten minutes?)"]
    before, after = tracemalloc.Snapshot.load(str(start)), tracemalloc.Snapshot.load(str(end))
    return [str(stat) for stat in after.compare_to(before, "lineno")[:25]]


def _llm_rss(kiosk_pid: int) -> int | None:
    servers = children_of(kiosk_pid)
    return sum(rss_kb(pid) or 0 for pid in servers) if servers else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--audio", choices=("none", "device"), default="none")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stand-in-llm", action="store_true", help="the scripted loopback LLM, not SmolLM2")
    parser.add_argument("--stop-share", type=float, default=0.5, help="the share of turns stopped mid-reply")
    parser.add_argument(
        "--stop-words", type=int, nargs=2, default=[1, 8], help="stop after this many heard words"
    )
    parser.add_argument("--sample-every-s", type=float, default=30.0)
    parser.add_argument("--max-minutes", type=float, help="end after this long, with the turns done so far")
    parser.add_argument(
        "--tracemalloc", action="store_true", help="report the kiosk's grown Python allocations"
    )
    common_options(parser)
    args = parser.parse_args()
    print_measured(__file__, args, lambda: measure(args))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
        env["XDG_STATE_HOME"] = folder
        env["XDG_CONFIG_HOME"] = f"{folder}/config"  # not this machine's config file
        start = [sys.executable, "-m", "voice"]
        snapshots: Path | None = None
        if args.tracemalloc:
            snapshots = Path(folder) / "snapshots"
            snapshots.mkdir()
            env["SOAK_SNAPSHOTS"] = str(snapshots)
            start = [sys.executable, "-c", UNDER_TRACEMALLOC]
        command = [*start, "kiosk", "--port", "0", "--audio", args.audio, "--sessions", f"{folder}/sessions"]
        llm = "embedded SmolLM2-135M (llama.cpp server)"
        if args.stand_in_llm:
            stand_in = stack.enter_context(StandInLlm())
            command += ["--llm-url", stand_in.url, "--llm-model", "stand-in"]
            llm = "voice/testing/stand_in_llm.py: scripted short replies over loopback HTTP"
        if args.audio == "device":
            env["PULSE_SERVER"] = stack.enter_context(private_pulse(Path(folder) / "pulse"))
            command += ["--input-device", "pulse", "--output-device", "pulse"]
        kiosk = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert kiosk.stdout is not None
        lines: list[str] = []
        started = threading.Event()
        port: list[int] = []

        def read() -> None:
            assert kiosk.stdout is not None
            for line in kiosk.stdout:
                lines.append(line.rstrip("\n"))
                found = re.match(r"kiosk: http://[^ ]+:(\d+)/", line)
                if found:
                    port.append(int(found.group(1)))
                    started.set()
            started.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        exceptions: list[str] = []
        report: dict[str, Any] = {"audio": args.audio, "llm": llm, "cpus": os.cpu_count()}
        sampler: Sampler | None = None
        try:
            started.wait(300)
            if not port:
                raise RuntimeError("voice kiosk did not start: " + " | ".join(lines))
            time.sleep(3 if args.audio == "device" else 0)  # devices open
            sampler = Sampler(kiosk.pid, args.sample_every_s, snapshots)
            report |= asyncio.run(soak(f"ws://127.0.0.1:{port[0]}/ws", args, sampler))
        except Exception as exc:  # a soak reports what broke rather than stopping silently
            exceptions.append(f"benchmark: {type(exc).__name__}: {exc}")
        finally:
            if sampler is not None:
                sampler.stop()
                report["wall_s"] = round(sampler.elapsed())
                report["rss_after_10_min"] = rss_after_ten_minutes(sampler.samples)
                report["samples_every_30_s"] = sampler.samples
                report["turns_done"] = sampler.turns
                if snapshots is not None:
                    report["tracemalloc_grown_10_min_to_end"] = grown_allocations(snapshots, kiosk.pid)
            stop_started = time.monotonic()
            report["exit_code"] = stop_kiosk(kiosk)
            report["stop_s"] = round(time.monotonic() - stop_started, 2)
            reader.join(5)
            kiosk.stdout.close()
        exceptions += [line for line in lines if "Traceback" in line or "Error" in line]
        report["exceptions"] = exceptions[:50]
        unexpected = [line for line in lines if not EXPECTED.match(line) and not UNDERRUN.search(line)]
        report["unexpected_output"] = unexpected[:50]
        report["alsa_underrun_notices"] = sum(1 for line in lines if UNDERRUN.search(line))
    return report


if __name__ == "__main__":
    main()
