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

Usage: python benchmarks/kiosk_soak.py [--turns 200] [--audio none|device] [--seed 1]
       (about 5-10 s per turn on 2 cores)
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from voice.audio.pulse import private_pulse

QUESTIONS = (
    "What is a fox?", "Tell me about the weather in spring.", "Name three colours.",
    "What do cats eat?", "Tell me a short story about a boat.", "Why is the sky blue?",
)  # fmt: skip
TURN_LIMIT_S = 180.0
UNDERRUN = re.compile(r"^ALSA lib .*underrun occurred")
EXPECTED = re.compile(r"^(kiosk: |voice kiosk: (audio devices open|closing a client)|loading whisper)")


def rss_kb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(found.group(1)) if found else None


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


class Soak:
    def __init__(self, ws: ClientConnection, seed: int) -> None:
        self.ws = ws
        self.random = random.Random(seed)
        self.errors: Counter[str] = Counter()
        self.dropped: list[str] = []
        self.self_interruptions: list[str] = []
        self.caption_steps: list[int] = []
        self.turn_s: list[float] = []
        self.ended: Counter[str] = Counter()

    async def next(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), TURN_LIMIT_S))
        if event["type"] == "error":
            self.errors[event["code"]] += 1
        return event

    async def turn(self, number: int) -> None:
        started = time.monotonic()
        input_id = f"soak-{number}"
        stop_after = self.random.randint(1, 8) if self.random.random() < 0.5 else None
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


async def soak(url: str, turns: int, seed: int, kiosk_pid: int) -> dict[str, Any]:
    async with connect(url, max_size=None) as ws:
        snapshot = json.loads(await ws.recv())
        run = Soak(ws, seed)
        rss_early: dict[str, int | None] = {}
        rss_every_20: list[dict[str, int | None]] = []
        for number in range(1, turns + 1):
            await run.turn(number)
            if number == min(10, turns):  # caches and the model warmed up
                rss_early = {"kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)}
            if number % 20 == 0:
                rss_every_20.append({"turn": number, "kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)})
        rss_end = {"kiosk": rss_kb(kiosk_pid), "llm": _llm_rss(kiosk_pid)}
    return {
        "session": snapshot["session"],
        "turns": turns,
        "ended": dict(run.ended),
        "dropped_events": run.dropped,
        "self_interruptions": run.self_interruptions,
        "caption_steps_over_one_word": {
            "count": len(run.caption_steps),
            "largest": max(run.caption_steps, default=0),
        },
        "errors_by_code": dict(run.errors),
        "rss_kb_after_warm_up": rss_early,
        "rss_kb_at_end": rss_end,
        "rss_kb_every_20_turns": rss_every_20,
        "kiosk_rss_growth_kb": (rss_end["kiosk"] or 0) - (rss_early.get("kiosk") or 0),
        "turn_s": {
            "median": round(sorted(run.turn_s)[len(run.turn_s) // 2], 2),
            "max": round(max(run.turn_s), 2),
        },
        "load_average_1_5_15": [round(load, 2) for load in os.getloadavg()],
    }


def _llm_rss(kiosk_pid: int) -> int | None:
    servers = children_of(kiosk_pid)
    return sum(rss_kb(pid) or 0 for pid in servers) if servers else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--audio", choices=("none", "device"), default="none")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
        env["XDG_STATE_HOME"] = folder
        command = [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", args.audio,
                   "--sessions", f"{folder}/sessions"]  # fmt: skip
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
        report: dict[str, Any] = {"audio": args.audio}
        try:
            started.wait(300)
            if not port:
                raise RuntimeError("voice kiosk did not start: " + " | ".join(lines))
            time.sleep(3 if args.audio == "device" else 0)  # devices open
            report |= asyncio.run(soak(f"ws://127.0.0.1:{port[0]}/ws", args.turns, args.seed, kiosk.pid))
        except Exception as exc:  # a soak reports what broke rather than stopping silently
            exceptions.append(f"benchmark: {type(exc).__name__}: {exc}")
        finally:
            stop_started = time.monotonic()
            kiosk.send_signal(signal.SIGTERM)
            try:
                report["exit_code"] = kiosk.wait(timeout=30)
            except subprocess.TimeoutExpired:
                kiosk.kill()
                report["exit_code"] = kiosk.wait()
            report["stop_s"] = round(time.monotonic() - stop_started, 2)
            reader.join(5)
            kiosk.stdout.close()
        exceptions += [line for line in lines if "Traceback" in line or "Error" in line]
        report["exceptions"] = exceptions
        unexpected = [line for line in lines if not EXPECTED.match(line) and not UNDERRUN.search(line)]
        report["unexpected_output"] = unexpected[:50]
        report["alsa_underrun_notices"] = sum(1 for line in lines if UNDERRUN.search(line))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
