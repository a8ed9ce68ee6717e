"""How many kiosks one model box carries: K simulated kiosks against one set of speech servers, as JSON.

The box is started from deploy/'s own units (wyoming-faster-whisper and wyoming-piper with voice's bundled
models, on loopback ports) and warmed up with one request each, as a box that has served before. For
each K (1, 2, 4, 8 by default) K processes of ``voice simulate SCENARIO --realtime --asr wyoming://...
--tts wyoming://...`` run at once: the virtual room paced by the wall clock, the scenarios' scripted
LLM, held-out-style recordings with cut-ins (interrupt-mid and two-interruptions, alternating). Per K it
reports, over all kiosks' turns:

- ``voice_to_voice``: end of the user's speech (the recording's marked end) to the first reply audio, p50/p95;
  ``endpointing_ms`` of it is the VAD's end silence, waited for by design at any load;
- ``barge_in_reaction``: the interrupting speech's onset to the reply's audio stopping, p50/p95;
- ``failures``: kiosks that exited non-zero, published an ``error`` event, or whose turns or interruptions
  differ from the scenario's expectation;
- the load average before and after, since the kiosks themselves (VAD, end-of-turn model, echo canceller)
  share the box's cores here, which a real deployment would not.

It stops after the first K that saturates: a failure, or a voice-to-voice p95 over ``--saturated-ms``.

Usage (from the repository root): PYTHONPATH=. python benchmarks/kiosk_load.py [--kiosks 1 2 4 8]
(about 5 minutes on 2 cores)
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from barge_in import (
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

from tests.deploy.units import DEPLOY, unit_command
from tests.remote.servers import free_port, wait_for_port
from voice.audio.wav import read_wav
from voice.remote.speech import synthesizer_for, transcriber_for

KIOSK_SCENARIOS = ("interrupt-mid", "two-interruptions")
SATURATED_MS = 5000.0  # a reply this long after the user stops is no longer a conversation


@contextlib.contextmanager
def model_box(work: Path) -> Iterator[tuple[str, str]]:
    """deploy/'s ASR and TTS units started on loopback ports; yields their wyoming:// URLs."""
    box = work / "box"
    subprocess.run(["sh", str(DEPLOY / "link-models.sh"), str(box / "models"), sys.executable], check=True)
    asr_port, tts_port = free_port(), free_port()
    replacements = {
        "/opt/voice/.venv": sys.prefix,
        "/var/lib/voice-box": str(box),
        "0.0.0.0": "127.0.0.1",
        "10300": str(asr_port),
        "10200": str(tts_port),
    }
    processes = []
    try:
        for unit, port in (("voice-box-asr.service", asr_port), ("voice-box-tts.service", tts_port)):
            command = unit_command(unit, replacements)
            log = work / f"{unit}.log"
            with log.open("wb") as out:
                environment = {**os.environ, **command.environment}
                process = subprocess.Popen(
                    command.argv, stdout=out, stderr=subprocess.STDOUT, env=environment
                )
            processes.append(process)
            wait_for_port(port, process, log)
        urls = f"wyoming://127.0.0.1:{asr_port}", f"wyoming://127.0.0.1:{tts_port}"
        warm_up(*urls)
        yield urls
    finally:
        for process in processes:
            process.kill()
            process.wait()


def warm_up(asr: str, tts: str) -> None:
    """One transcription and one synthesis: both servers load their model at the first request."""
    with transcriber_for(asr) as transcriber, synthesizer_for(tts) as synthesizer:
        transcriber.transcribe(read_wav(AUDIO / "hello-there.wav"))
        synthesizer.synthesize("Hello there.")


def kiosk_environment(work: Path) -> dict[str, str]:
    """This machine's environment without the user's voice settings or config file."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    return {**environ, "XDG_CONFIG_HOME": str(work / "config")}


@dataclass
class Kiosk:
    """One simulated kiosk: its scenario, where its outputs go, and how its process ended."""

    scenario: str
    out: Path
    code: int | None = None
    output: str = ""
    wall_s: float = 0.0


def run_kiosks(count: int, asr: str, tts: str, work: Path) -> list[Kiosk]:
    """``count`` simulated kiosks at once, each a ``voice simulate --realtime`` process."""
    started = time.monotonic()
    running: list[tuple[Kiosk, subprocess.Popen[str]]] = []
    for index in range(count):
        name = KIOSK_SCENARIOS[index % len(KIOSK_SCENARIOS)]
        kiosk = Kiosk(name, work / f"k{count}" / f"kiosk{index + 1}-{name}")
        command = [
            sys.executable, "-m", "voice", "simulate", str(SCENARIOS / f"{name}.json"), "--realtime",
            "--asr", asr, "--tts", tts, "--out", str(kiosk.out),
        ]  # fmt: skip
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=kiosk_environment(work)
        )
        running.append((kiosk, process))
    for kiosk, process in running:
        kiosk.output, _ = process.communicate()
        kiosk.code = process.returncode
        kiosk.wall_s = round(time.monotonic() - started, 1)
    return [kiosk for kiosk, _ in running]


def kiosk_failure(kiosk: Kiosk) -> str | None:
    """Why a kiosk's run failed as a user would notice, or None."""
    if kiosk.code != 0:
        return f"exit code {kiosk.code}: {kiosk.output.strip()[-300:]}"
    expect = json.loads((SCENARIOS / f"{kiosk.scenario}.json").read_text(encoding="utf-8"))["expect"]
    report = json.loads((kiosk.out / "report.json").read_text(encoding="utf-8"))
    errors = [
        event["message"]
        for line in (kiosk.out / "events.jsonl").read_text(encoding="utf-8").splitlines()
        if (event := json.loads(line))["type"] == "error"
    ]
    if errors:
        return f"error events: {errors[:3]}"
    interrupted = [turn["interrupted"] for turn in report["turns"]]
    expected = [turn["interrupted"] for turn in expect["turns"]]
    if interrupted != expected:
        return f"turns interrupted {interrupted}, expected {expected}"
    return None


def level(count: int, asr: str, tts: str, work: Path, manifest: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One K: the kiosks' latencies, reactions and failures together."""
    load_before = os.getloadavg()[0]
    kiosks = run_kiosks(count, asr, tts, work)
    load_after = os.getloadavg()[0]
    failures = [
        {"kiosk": index, "scenario": kiosk.scenario, "why": why}
        for index, kiosk in enumerate(kiosks, start=1)
        if (why := kiosk_failure(kiosk)) is not None
    ]
    failed = {failure["kiosk"] for failure in failures}
    runs = [
        Run(
            kiosk.scenario,
            json.loads((kiosk.out / "report.json").read_text(encoding="utf-8")),
            kiosk.out,
            None,
        )
        for index, kiosk in enumerate(kiosks, start=1)
        if index not in failed
    ]
    latencies = [ms(audio - end) for run in runs for end, audio in reply_delays(run, manifest).values()]
    outcomes = [turn_outcomes(run, manifest) for run in runs]
    reactions = [reaction["reaction_ms"] for outcome in outcomes for reaction in outcome["reactions"]]
    return {
        "kiosks": count,
        "voice_to_voice": summary(latencies),
        "barge_in_reaction": summary(reactions),
        "self_interruptions": sum(len(outcome["self_interruptions"]) for outcome in outcomes),
        "failures": len(failures),
        "failed": failures,
        "slowest_kiosk_wall_s": max(kiosk.wall_s for kiosk in kiosks),
        "load_average_1min": {"before": round(load_before, 2), "after": round(load_after, 2)},
    }


def saturated(row: dict[str, Any], limit_ms: float) -> bool:
    p95 = row["voice_to_voice"]["p95_ms"]
    return bool(row["failures"]) or p95 is None or p95 > limit_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiosks", type=int, nargs="+", default=[1, 2, 4, 8], help="the K to run, in order")
    parser.add_argument(
        "--saturated-ms", type=float, default=SATURATED_MS, help="voice-to-voice p95 that counts as saturated"
    )
    parser.add_argument("--keep", type=Path, help="keep the outputs and server logs here")
    args = parser.parse_args()
    started = time.monotonic()
    manifest = load_manifest()
    rows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        work = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kiosk-load-")))
        with model_box(work) as (asr, tts):
            progress(f"model box up: {asr} {tts}", started)
            for count in args.kiosks:
                rows.append(level(count, asr, tts, work, manifest))
                progress(f"K={count}: {json.dumps(rows[-1]['voice_to_voice'])}", started)
                if saturated(rows[-1], args.saturated_ms):
                    break
    result = {
        "box": "deploy/voice-box-asr.service and voice-box-tts.service on loopback, bundled models",
        "scenarios": list(KIOSK_SCENARIOS),
        "cpu_count": os.cpu_count(),
        "endpointing_ms": ENDPOINTING_MS,
        "saturated_when": f"a failure or voice-to-voice p95 > {args.saturated_ms:g} ms",
        "levels": rows,
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
