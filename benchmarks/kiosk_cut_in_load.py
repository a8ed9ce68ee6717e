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
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common.harness import print_json
from common.kiosk_process import KioskOutput, kiosk_closes, stop_kiosk
from common.talking_page import COLD_CYCLES, NOTICE, SCENARIO, Cycle, reply_to, talk
from kiosk_clients import Flooder, Watcher, flood, sample, stalled_reader, watch

from voice.testing.stand_in_llm import StandInLlm


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
    print_json(result, args.out)


if __name__ == "__main__":
    main()
