"""How fast a remote speech call that is no longer wanted is left, and what it costs the next call, as JSON.

Starts the registry's four speech servers on loopback with the bundled models (wyoming-piper,
local-tts-studio, wyoming-faster-whisper, faster-whisper-server). For each, ``--runs`` times: a long call
run to the end (``full_s``), the same call cancelled from another thread (``cut_return_ms``: the cancel to
the call's return; Wyoming voices are cut at their first audio chunk, the others 0.3 s in), then a short
call at once (``next_after_cut_s``), against a short call on an idle server (``next_idle_s``). A server that
keeps working on an abandoned request makes ``next_after_cut_s`` exceed ``next_idle_s``: that wait is the
server's, the client's worker is free at once.

Usage (from the repository root): PYTHONPATH=. python benchmarks/remote_cancel.py [--runs N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.cancel import INTERRUPTED, CancelToken
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.remote.wyoming_link import WyomingConnection
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.speech_servers import speech_servers

LONG = " ".join(f"Sentence {n} of a long reply keeps the voice busy before it answers." for n in range(14))
PATIENT = Limits(idle_timeout_s=300.0)
first_audio = threading.Event()
_receive = WyomingConnection.receive


def _watched(connection: WyomingConnection) -> Any:
    """The real receive, noting the first audio chunk of a call (so a cut can follow it)."""
    event = _receive(connection)
    if event.type == "audio-chunk":
        first_audio.set()
    return event


WyomingConnection.receive = _watched  # type: ignore[method-assign]


def timed(call: Callable[[], object]) -> float:
    started = time.monotonic()
    call()
    return time.monotonic() - started


def cut(call: Callable[[CancelToken], object], when: threading.Event) -> float:
    """Milliseconds from the cancel (fired from another thread at ``when``) to the call's return."""
    token, fired = CancelToken(), [0.0]

    def fire() -> None:
        when.wait(timeout=120)
        fired[0] = time.monotonic()
        token.cancel(INTERRUPTED)

    threading.Thread(target=fire, daemon=True).start()
    try:
        call(token)
    except SpeechServerError as error:
        if error.code.value != "cancelled":
            raise
    else:
        raise RuntimeError("the call finished before its cancel")
    return round((time.monotonic() - fired[0]) * 1000, 1)


def after(seconds: float) -> threading.Event:
    event = threading.Event()
    threading.Timer(seconds, event.set).start()
    return event


def measure(
    long: Callable[[CancelToken | None], object], short: Callable[[], object], wyoming_voice: bool, runs: int
) -> dict[str, Any]:
    short()  # loaded
    rows: dict[str, list[float]] = {
        "full_s": [],
        "cut_return_ms": [],
        "next_after_cut_s": [],
        "next_idle_s": [],
    }
    for _ in range(runs):
        rows["full_s"].append(timed(lambda: long(None)))
        rows["next_idle_s"].append(timed(short))
        first_audio.clear()
        rows["cut_return_ms"].append(cut(long, first_audio if wyoming_voice else after(0.3)))
        rows["next_after_cut_s"].append(timed(short))
    return {
        name: {"median": round(statistics.median(values), 3), "all": [round(v, 3) for v in values]}
        for name, values in rows.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    question = read_wav("audio/what-weather.wav")
    gap = np.zeros(ENGINE_RATE // 2, np.float32)
    twice = AudioBlock(np.concatenate([question.samples, gap, question.samples]), ENGINE_RATE)
    result: dict[str, Any] = {"runs": runs, "load_average_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="remote-cancel-") as folder, contextlib.ExitStack() as stack:
        servers = stack.enter_context(speech_servers(Path(folder)))
        voices = {
            "wyoming-piper": (servers.wyoming_piper, True),
            "local-tts-studio": (servers.piper_http, False),
        }
        for name, (url, wyoming) in voices.items():
            voice = stack.enter_context(synthesizer_for(url, limits=PATIENT))
            print(name, file=sys.stderr)
            result[name] = measure(
                lambda token, v=voice: v.synthesize(LONG, cancel=token),
                lambda v=voice: v.synthesize("Hello there."),
                wyoming,
                runs,
            )
        ears_at = {
            "wyoming-faster-whisper": servers.wyoming_whisper,
            "faster-whisper-server": servers.whisper_http,
        }
        for name, url in ears_at.items():
            ears = stack.enter_context(transcriber_for(url, limits=PATIENT))
            print(name, file=sys.stderr)
            result[name] = measure(
                lambda token, e=ears: e.transcribe(twice, cancel=token),
                lambda e=ears: e.transcribe(question),
                False,
                runs,
            )
    result["load_average_after"] = os.getloadavg()[0]
    json.dump(with_cpu(result), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
