"""How many kiosks one model box carries: K simulated kiosks against one set of speech servers, as JSON.

The box is started from deploy/'s own units (wyoming-faster-whisper and wyoming-piper with voice's bundled
models, on loopback ports) and warmed up with one request each, as a box that has served before. For
each K (1, 2, 4, 8 by default) K processes of ``voice simulate SCENARIO --realtime --asr wyoming://...
--tts wyoming://...`` run at once: the virtual room paced by the wall clock, the scenarios' scripted
LLM, held-out-style recordings with cut-ins (interrupt-mid and two-interruptions, alternating). With
``--llm box`` the box also runs deploy/'s LLM unit (llama.cpp's server with the bundled SmolLM2, requests
queued, never interrupting each other) and every kiosk's replies come from it instead of the script. Per K
it reports, over all kiosks' turns:

- ``voice_to_voice``: end of the user's speech (the recording's marked end) to the first reply audio, p50/p95;
  ``endpointing_ms`` of it is the VAD's end silence, waited for by design at any load;
- ``asr_call`` (the end of the VAD's end silence to the transcript) and ``reply_to_first_audio`` (the
  LLM's first clause, 300 ms of it the script's first delta, and the TTS call), from the kiosks' events;
- ``barge_in_reaction``: the interrupting speech's onset to the reply's audio stopping, p50/p95;
- ``reply_stalls``: replies that stopped mid-way to wait for the next chunk's audio;
- ``failures``: kiosk runs that exited non-zero, left the user's words untranscribed at the scenario's end,
  published an ``error`` event, or whose turns or interruptions differ from the scenario's expectation;
- the load average before and after, since the kiosks themselves (VAD, end-of-turn model, echo canceller)
  share the box's cores here, which a real deployment would not.

It stops after the first K that saturates: a failure, or a voice-to-voice p95 over ``--saturated-factor``
(3) times the first K's.

Usage (from the repository root): PYTHONPATH=. python benchmarks/kiosk_load.py [--kiosks 1 2 4 8]
[--llm box] (5 to 10 minutes on 2 cores: each kiosk runs both scenarios, one after the other)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from common.machine import with_cpu
from common.scenario_runs import (
    AUDIO,
    ENDPOINTING_MS,
    SCENARIOS,
    Run,
    load_manifest,
    ms,
    progress,
    reply_delays,
    summary,
    turn_outcomes,
)

from voice.audio.wav import read_wav
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.deploy_units import DEPLOY, unit_command
from voice.testing.loopback import free_port, wait_for_port

KIOSK_SCENARIOS = ("interrupt-mid", "two-interruptions")
SATURATED_FACTOR = 3.0  # three times slower than one kiosk alone: each visitor waits seconds more
LLM_UNIT_MODEL = "smollm2-135m-instruct"  # the alias deploy/voice-box-llm.service serves its model as
LLM_GRACE_S = 20  # a real model's slower replies still finish before the scenario ends


@dataclass(frozen=True)
class Box:
    """Where the model box's servers listen; ``llm`` is its /v1 URL when it runs one."""

    asr: str
    tts: str
    llm: str | None = None


@contextlib.contextmanager
def model_box(work: Path, llm_threads: int | None) -> Iterator[Box]:
    """deploy/'s ASR and TTS units, and its LLM unit on ``llm_threads`` threads if given, on loopback."""
    box = work / "box"
    link = ["sh", str(DEPLOY / "link-models.sh"), str(box / "models"), sys.executable]
    subprocess.run(link, check=True, stdout=subprocess.DEVNULL)
    asr_port, tts_port, llm_port = free_port(), free_port(), free_port()
    replacements = {
        "/opt/voice/.venv": sys.prefix,
        "/var/lib/voice-box": str(box),
        "0.0.0.0": "127.0.0.1",
        "10300": str(asr_port),
        "10200": str(tts_port),
        "8080": str(llm_port),
    }
    units = [("voice-box-asr.service", asr_port, {}), ("voice-box-tts.service", tts_port, {})]
    if llm_threads is not None:
        units.append(("voice-box-llm.service", llm_port, {"LLM_THREADS": str(llm_threads)}))
    processes = []
    try:
        for unit, port, overrides in units:
            command = unit_command(unit, replacements, overrides)
            log = work / f"{unit}.log"
            with log.open("wb") as out:
                environment = {**os.environ, **command.environment}
                process = subprocess.Popen(
                    command.argv, stdout=out, stderr=subprocess.STDOUT, env=environment
                )
            processes.append(process)
            wait_for_port(port, process, log)
        urls = Box(
            f"wyoming://127.0.0.1:{asr_port}",
            f"wyoming://127.0.0.1:{tts_port}",
            f"http://127.0.0.1:{llm_port}/v1" if llm_threads is not None else None,
        )
        warm_up(urls)
        yield urls
    finally:
        for process in processes:
            process.kill()
            process.wait()


def warm_up(box: Box) -> None:
    """One request to each server: each loads its model (llama.cpp: its first prompt) at the first."""
    with transcriber_for(box.asr) as transcriber, synthesizer_for(box.tts) as synthesizer:
        transcriber.transcribe(read_wav(AUDIO / "hello-there.wav"))
        synthesizer.synthesize("Hello there.")
    if box.llm is not None:
        question = {
            "model": LLM_UNIT_MODEL,
            "messages": [{"role": "user", "content": "Hello."}],
            "max_tokens": 8,
        }
        httpx.post(f"{box.llm}/chat/completions", json=question, timeout=300).raise_for_status()


def kiosk_scenarios(work: Path, llm: str | None) -> dict[str, Path]:
    """The kiosks' scenario files: as they are, or with their replies from the box's LLM at ``llm``."""
    if llm is None:
        return {name: SCENARIOS / f"{name}.json" for name in KIOSK_SCENARIOS}
    folder = work / "scenarios"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in KIOSK_SCENARIOS:
        scenario = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
        scenario["llm"] = {"url": llm, "model": LLM_UNIT_MODEL, "max_tokens": 60}
        scenario["end_s"] += LLM_GRACE_S
        for speech in scenario["user"]:  # the recordings are named relative to the scenario's folder
            speech["wav"] = str((SCENARIOS / speech["wav"]).resolve())
        files[name] = folder / f"{name}.json"
        files[name].write_text(json.dumps(scenario, indent=2), encoding="utf-8")
    return files


def kiosk_environment(work: Path) -> dict[str, str]:
    """This machine's environment without the user's voice settings or config file."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    return {**environ, "XDG_CONFIG_HOME": str(work / "config")}


@dataclass
class KioskRun:
    """One scenario a simulated kiosk ran: which, where its outputs are, and how its process ended."""

    scenario: str
    out: Path
    code: int | None = None
    output: str = ""
    wall_s: float = 0.0


def run_kiosk(number: int, count: int, box: Box, scenarios: dict[str, Path], work: Path) -> list[KioskRun]:
    """One kiosk's visitors: every scenario in turn, each a ``voice simulate --realtime`` process.

    Kiosks start at different scenarios, so at any moment the box serves a mix of them.
    """
    names = KIOSK_SCENARIOS[number % 2 :] + KIOSK_SCENARIOS[: number % 2]
    runs = []
    for name in names:
        kiosk = KioskRun(name, work / f"k{count}" / f"kiosk{number + 1}-{name}")
        command = [
            sys.executable, "-m", "voice", "simulate", str(scenarios[name]), "--realtime",
            "--asr", box.asr, "--tts", box.tts, "--out", str(kiosk.out),
        ]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=kiosk_environment(work)
        )
        kiosk.code, kiosk.output = done.returncode, done.stdout
        kiosk.wall_s = round(time.monotonic() - started, 1)
        runs.append(kiosk)
    return runs


def run_kiosks(count: int, box: Box, scenarios: dict[str, Path], work: Path) -> list[KioskRun]:
    """``count`` simulated kiosks at once; every scenario run of every kiosk."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        kiosks = pool.map(lambda number: run_kiosk(number, count, box, scenarios, work), range(count))
        return [run for runs in kiosks for run in runs]


def read_report(out: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return report


def kiosk_failure(kiosk: KioskRun, scripted: bool) -> str | None:
    """Why a kiosk's run failed as a user would notice, or None.

    A real model's replies have their own lengths, so a cut-in timed for the script's may come after one
    ended: only scripted replies must be interrupted as the scenario expects.
    """
    if kiosk.code != 0:
        return f"exit code {kiosk.code}: {kiosk.output.strip()[-300:]}"
    expect = json.loads((SCENARIOS / f"{kiosk.scenario}.json").read_text(encoding="utf-8"))["fixture_expect"]
    report = read_report(kiosk.out)
    errors = [
        event["message"]
        for line in (kiosk.out / "events.jsonl").read_text(encoding="utf-8").splitlines()
        if (event := json.loads(line))["type"] == "error"
    ]
    if errors:
        return f"error events: {errors[:3]}"
    unheard = sum(speech["transcript"] is None for speech in report["user_speech"])
    if unheard:
        return f"{unheard} utterance(s) still waiting for a transcript when the scenario ended"
    interrupted = [turn["interrupted"] for turn in report["turns"]]
    expected = [turn["interrupted"] for turn in expect["turns"]]
    if scripted and interrupted != expected:
        return f"turns interrupted {interrupted}, expected {expected}"
    return None


def box_calls(out: Path) -> tuple[list[float], list[float], int]:
    """From a run's events: each ASR call (thinking to transcript), each reply's start (created to speaking),
    and the reply's stalls (speaking, then waiting for the next chunk's audio).

    A reply's start is the scenario's scripted first delta, the first clause and its TTS call.
    """
    asr, first_audio, stalls = [], [], 0
    thinking = created = state = None
    for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == "state":
            if event["state"] == "thinking":
                stalls += state == "speaking"
                thinking = event["t"]
            elif event["state"] == "speaking" and created is not None:
                first_audio.append(ms(event["t"] - created))
                created = None
            state = event["state"]
        elif event["type"] == "input.transcript" and thinking is not None:
            asr.append(ms(event["t"] - thinking))
            thinking = None
        elif event["type"] == "response.created":
            created = event["t"]
    return asr, first_audio, stalls


def level(
    count: int, box: Box, scenarios: dict[str, Path], work: Path, manifest: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """One K: the kiosks' latencies, reactions and failures together."""
    load_before = os.getloadavg()[0]
    kiosks = run_kiosks(count, box, scenarios, work)
    load_after = os.getloadavg()[0]
    why = {kiosk.out.name: kiosk_failure(kiosk, box.llm is None) for kiosk in kiosks}
    failures = [{"run": name, "why": reason} for name, reason in why.items() if reason is not None]
    ended = [kiosk for kiosk in kiosks if kiosk.code == 0]
    runs = [Run(kiosk.scenario, read_report(kiosk.out), kiosk.out, None) for kiosk in ended]
    latencies = [ms(audio - end) for run in runs for end, audio in reply_delays(run, manifest).values()]
    outcomes = [turn_outcomes(run, manifest) for run in runs]
    reactions = [reaction["reaction_ms"] for outcome in outcomes for reaction in outcome["reactions"]]
    calls = [box_calls(run.out) for run in runs]
    return {
        "kiosks": count,
        "voice_to_voice": summary(latencies),
        "asr_call": summary([value for asr, _, _ in calls for value in asr]),
        "reply_to_first_audio": summary([value for _, audio, _ in calls for value in audio]),
        "reply_stalls": sum(stalls for _, _, stalls in calls),
        "barge_in_reaction": summary(reactions),
        "self_interruptions": sum(len(outcome["self_interruptions"]) for outcome in outcomes),
        "interrupted_turns": sum(turn["interrupted"] for run in runs for turn in run.report["turns"]),
        "failures": len(failures),
        "failed": failures,
        "slowest_scenario_wall_s": max(kiosk.wall_s for kiosk in kiosks),
        "load_average_1min": {"before": round(load_before, 2), "after": round(load_after, 2)},
    }


def saturated(row: dict[str, Any], alone: dict[str, Any], factor: float) -> bool:
    """A kiosk failed, or the voice-to-voice p95 grew past ``factor`` times one kiosk's alone."""
    p95, alone_p95 = row["voice_to_voice"]["p95_ms"], alone["voice_to_voice"]["p95_ms"]
    return bool(row["failures"]) or p95 is None or alone_p95 is None or p95 > factor * alone_p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiosks", type=int, nargs="+", default=[1, 2, 4, 8], help="the K to run, in order")
    parser.add_argument(
        "--saturated-factor",
        type=float,
        default=SATURATED_FACTOR,
        help="saturated when the voice-to-voice p95 grows past this many times the first K's",
    )
    parser.add_argument("--keep", type=Path, help="keep the outputs and server logs here")
    parser.add_argument(
        "--llm",
        choices=("scripted", "box"),
        default="scripted",
        help="the scenarios' scripted replies, or the box's llama.cpp server (deploy/voice-box-llm.service)",
    )
    parser.add_argument(
        "--llm-threads",
        type=int,
        default=1,
        help="the box LLM's LLM_THREADS (default 1: here the kiosks share its cores, and two threads on a "
        "crowded 2-core machine took 13-27 s a reply where one took under 1 s)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    manifest = load_manifest()
    rows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        work = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kiosk-load-")))
        with model_box(work, args.llm_threads if args.llm == "box" else None) as box:
            progress(f"model box up: {box}", started)
            scenarios = kiosk_scenarios(work, box.llm)
            for count in args.kiosks:
                rows.append(level(count, box, scenarios, work, manifest))
                progress(f"K={count}: {json.dumps(rows[-1]['voice_to_voice'])}", started)
                if saturated(rows[-1], rows[0], args.saturated_factor):
                    break
    result = {
        "box": "deploy/voice-box-asr.service and voice-box-tts.service on loopback, bundled models",
        "llm": "scripted replies"
        if args.llm == "scripted"
        else f"deploy/voice-box-llm.service ({LLM_UNIT_MODEL}, LLM_THREADS={args.llm_threads})",
        "scenarios": list(KIOSK_SCENARIOS),
        "cpu_count": os.cpu_count(),
        "endpointing_ms": ENDPOINTING_MS,
        "saturated_when": f"a failure, or voice-to-voice p95 over {args.saturated_factor:g} x the first K's",
        "levels": rows,
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(with_cpu(result), indent=2))


if __name__ == "__main__":
    main()
