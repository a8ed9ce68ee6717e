"""How long a paused reply keeps sounding on a private PulseAudio null sink, and whether the audio
counted as played is what reached the sink; printed as JSON.

Each trial opens the speaker as `voice chat` does (voice/chat/driver.py's openers) and the mic on the
sink's monitor, plays white noise (every sample tells where in the reply it is), pauses it ``--after-s``
in as a barge-in does, and silences what the sound server still holds where the tree can. Reported:

- ``sounding_after_pause_ms``: the reply still reaching the mic after the pause, on the mic's clock
  (from the mic sample captured when the pause came, so it includes the capture latency);
- ``heard_gap_ms``: the reply's audio that reached the sink minus what the buffer counts as played,
  once everything settled (positive: heard, not counted; negative: counted, never heard);
- ``counted_ahead_ms``: how far the heard progress reported just before the pause ran ahead of what
  finally reached the sink (0 when never ahead);
- the speaker's underflows.

Usage: python benchmarks/pulse_cut.py [--trials 12] [--after-s 1.5] [--against TREE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.against import print_before_and_after

import voice
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import rescan_devices
from voice.audio.playback import PlaybackBuffer
from voice.audio.pulse import private_pulse
from voice.chat.driver import DeviceSettings, device_openers

SETTLE_S = 0.6  # after the pause: longer than PulseAudio holds, so the held audio has played or not


def trial(after_s: float, seed: int) -> dict[str, Any]:
    blocks: list[AudioBlock] = []
    lock = threading.Lock()

    def heard(block: AudioBlock) -> None:
        with lock:
            blocks.append(block)

    def mic_audio() -> np.ndarray:
        with lock:
            return np.concatenate([b.samples for b in blocks]) if blocks else np.zeros(0, np.float32)

    open_input, open_output = device_openers(DeviceSettings("pulse", "pulse"))
    buffer = PlaybackBuffer(ENGINE_RATE)
    speaker = open_output(buffer, lambda block: None)
    mic = open_input(heard)
    try:
        deadline = time.monotonic() + 10
        while len(mic_audio()) < ENGINE_RATE // 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        reply = (np.random.default_rng(seed).standard_normal(4 * ENGINE_RATE) * 0.1).astype(np.float32)
        buffer.enqueue(reply, turn=1)
        time.sleep(after_s)
        cut_at = len(mic_audio())
        counted_before = buffer.audio_played_at(speaker.position - speaker.latency_samples)
        buffer.pause()
        silence = getattr(speaker, "silence_unplayed", None)
        silenced = silence() if silence is not None else None
        until = time.monotonic() + SETTLE_S
        while time.monotonic() < until:  # as the driver checks between mic blocks
            unmute = getattr(speaker, "unmute_when_played", None)
            if unmute is not None:
                unmute()
            time.sleep(0.04)
        counted = buffer.audio_played_to
        underflows = speaker.underflows
    finally:
        mic.close()
        speaker.close()
    audio = mic_audio()
    loud = np.flatnonzero(np.abs(audio) > 1e-3)
    if not len(loud):
        return {"seed": seed, "heard": False}
    first, end = int(loud[0]), int(loud[-1]) + 1
    reached = end - first

    def ms(samples: int) -> float:
        return round(samples * 1000 / ENGINE_RATE, 1)

    return {
        "seed": seed,
        "silenced": silenced is not None,
        "sounding_after_pause_ms": ms(end - cut_at),
        "heard_gap_ms": ms(reached - counted),
        "counted_ahead_ms": ms(max(0, counted_before - reached)),
        "underflows": underflows,
    }


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    load_start = os.getloadavg()
    with private_pulse(folder / "pulse") as server:
        os.environ["PULSE_SERVER"] = server
        rescan_devices()
        rows = [trial(args.after_s + 0.0137 * n, n) for n in range(args.trials)]
    done = [row for row in rows if "sounding_after_pause_ms" in row]

    def median(key: str) -> float | None:
        return round(statistics.median(row[key] for row in done), 1) if done else None

    return {
        "voice_package": str(Path(voice.__file__).parent),
        "trials": len(rows),
        "silenced": sum(bool(row.get("silenced")) for row in rows),
        "sounding_after_pause_ms": {
            "p50": median("sounding_after_pause_ms"),
            "max": max((row["sounding_after_pause_ms"] for row in done), default=None),
        },
        "heard_gap_ms": {
            "p50": median("heard_gap_ms"),
            "min": min((row["heard_gap_ms"] for row in done), default=None),
            "max": max((row["heard_gap_ms"] for row in done), default=None),
        },
        "counted_ahead_ms_max": max((row["counted_ahead_ms"] for row in done), default=None),
        "underflows": sum(row["underflows"] for row in done),
        "load_average": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--after-s", type=float, default=1.5, help="into the reply before the pause")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument("--against", type=Path, help="another source tree to measure first, for before/after")
    args = parser.parse_args()

    def measure() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="pulse-cut-") as folder:
            return run(args, Path(folder))

    print_before_and_after(args.against, __file__, sys.argv[1:], measure, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
