"""Audio front-end cost figures, printed as JSON.

- ``vad_us_per_block_median`` / ``_p95``: VoiceActivityDetector.process on one 20 ms block, over 30 s of
  espeak-ng speech and pauses in a noise floor, for the quiet and the barge-in settings.
- ``aec_us_per_block_median``: WebRtcEchoCanceller.process on one 20 ms block with echo present.
- ``mic_loop_cpu_percent``: CPU of this process, in % of one core, while a mic streams and every block
  goes through the VAD (the idle listening loop; target < 5 %). The mic is the monitor of a private
  PulseAudio null sink, so the figure is the same on a desktop and on a headless machine.

Usage: python benchmarks/audio_vad.py [--listen-seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import MicrophoneStream, rescan_devices
from voice.audio.echo import WebRtcEchoCanceller
from voice.audio.pulse import private_pulse
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.audio.wav import read_wav

BLOCK = ENGINE_RATE // 50  # 20 ms

SENTENCES = [
    "What's the weather like tomorrow in Paris?",
    "Sorry, I meant Sunday.",
    "Tomorrow starts dry, then rain moves in from the west.",
    "Could you set a timer for ten minutes?",
]


def speech_scene(seconds: float) -> np.ndarray:
    """Sentences with pauses between them over a faint noise floor."""
    rng = np.random.default_rng(0)
    signal = (0.002 * rng.standard_normal(int(seconds * ENGINE_RATE))).astype(np.float32)
    with tempfile.TemporaryDirectory() as folder:
        position = ENGINE_RATE // 2
        while position < len(signal):
            for text in SENTENCES:
                path = Path(folder) / "s.wav"
                subprocess.run(["espeak-ng", "-w", str(path), text], check=True)
                speech = read_wav(path).samples[: len(signal) - position]
                signal[position : position + len(speech)] += speech
                position += len(speech) + ENGINE_RATE
                if position >= len(signal):
                    break
    return signal


def time_blocks(signal: np.ndarray, step: Callable[[AudioBlock], object]) -> list[float]:
    """Microseconds spent in ``step(block)`` for each 20 ms block."""
    costs = []
    for offset in range(0, len(signal) - BLOCK + 1, BLOCK):
        block = AudioBlock(signal[offset : offset + BLOCK], ENGINE_RATE, offset)
        began = time.perf_counter_ns()
        step(block)
        costs.append((time.perf_counter_ns() - began) / 1000)
    return costs


def summary(costs: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(costs), 1),
        "p95": round(statistics.quantiles(costs, n=20)[-1], 1),
    }


def mic_loop_cpu(seconds: float) -> dict[str, Any]:
    """CPU share while a private PulseAudio's mic streams into a thread that runs the VAD on every block."""
    with tempfile.TemporaryDirectory(prefix="voice-vad-") as folder, private_pulse(Path(folder)) as server:
        os.environ["PULSE_SERVER"] = server
        rescan_devices()
        return mic_loop_cpu_on("pulse", seconds)


def mic_loop_cpu_on(device: str, seconds: float) -> dict[str, Any]:
    blocks: queue.Queue[AudioBlock | None] = queue.Queue()
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    counted = [0]

    def listen() -> None:
        while (block := blocks.get()) is not None:
            detector.process(block, assistant_speaking=False)
            counted[0] += 1

    mic = MicrophoneStream(blocks.put, device)
    worker = threading.Thread(target=listen)
    worker.start()
    with mic:
        time.sleep(3.0)  # PortAudio-on-PulseAudio busy-waits while a stream starts: measure after
        cpu, wall = time.process_time(), time.monotonic()
        time.sleep(seconds)
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        mic.check()
    blocks.put(None)
    worker.join()
    return {
        "mic_loop_cpu_percent": round(100 * cpu / wall, 2),
        "mic_loop_device": mic.name,
        "mic_loop_blocks": counted[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen-seconds", type=float, default=10.0)
    args = parser.parse_args()

    signal = speech_scene(30.0)
    results: dict[str, Any] = {"block_ms": 20}
    for name, speaking in (("quiet", False), ("barge_in", True)):
        detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
        costs = summary(time_blocks(signal, lambda block: detector.process(block, speaking)))  # noqa: B023
        results[f"vad_{name}_us_per_block_median"] = costs["median"]
        results[f"vad_{name}_us_per_block_p95"] = costs["p95"]

    canceller = WebRtcEchoCanceller()
    echo = 0.25 * np.roll(signal, 640)
    mic = (echo + 0.001 * np.random.default_rng(1).standard_normal(len(signal))).astype(np.float32)
    aec_costs = time_blocks(
        mic, lambda b: canceller.process(b, AudioBlock(signal[b.start : b.end], b.rate, b.start))
    )
    results["aec_us_per_block_median"] = summary(aec_costs)["median"]

    results.update(mic_loop_cpu(args.listen_seconds))
    print(json.dumps(with_cpu(results), indent=2))


if __name__ == "__main__":
    main()
