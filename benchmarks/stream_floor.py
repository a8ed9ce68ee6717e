"""What the sound streams cost by themselves on a private PulseAudio null sink, printed as JSON: the floor
under `voice chat`'s idle listening (benchmarks/idle.py), and what PulseAudio's own API would cost instead.

Each case runs in a process of its own, settles, and is measured from /proc for ``--seconds``: the run time
of all its threads (schedstat) in % of one core and their wake-ups a second. ``--rounds`` alternate the
cases, so that a busy machine weighs on all of them alike; the medians are reported.

- ``portaudio_mic`` / ``portaudio_speaker``: a PortAudio stream as voice/audio/devices.py opens it (ALSA's
  pulse plugin, 16 kHz mono float32, ``--block-ms`` blocks, latency "low") whose callback does nothing
  but hand the speaker silence: PortAudio's callback thread and libpulse's thread, no Python work.
- ``portaudio_speaker_rested``: the same speaker, started and then stopped, as a resting speaker is.
- ``pulse_record_{N}ms`` / ``pulse_playback``: PulseAudio's own client tools (``parec`` / ``pacat``), which
  use libpulse directly, recording with N ms fragments and playing silence with a 120 ms buffer taking
  ``--block-ms`` at a time: the floor of a mic or speaker that left PortAudio and ALSA for libpulse.

Usage: python benchmarks/stream_floor.py [--seconds 15] [--rounds 3] [--block-ms 40] [--record-ms 40,400]
(about ``rounds x cases x (seconds + 4)`` s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from voice.audio.block import ENGINE_RATE
from voice.audio.pulse import private_pulse
from voice.process import stop_process

SETTLE_S = 3.0
STOP_TIMEOUT_S = 5.0

# The child that holds one PortAudio stream open: kind, rate, block frames and "rest" or "run" from argv.
PORTAUDIO_CHILD = """
import sys, time
import sounddevice as sd
kind, rate, frames, rest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "rest"
silence = bytes(frames * 4)
def play(data, count, time_info, status):
    data[:] = silence if count == frames else bytes(count * 4)
def record(data, count, time_info, status):
    pass
Stream = sd.RawOutputStream if kind == "speaker" else sd.RawInputStream
stream = Stream(samplerate=rate, blocksize=frames, device="pulse", channels=1, dtype="float32",
                latency="low", callback=play if kind == "speaker" else record)
stream.start()
if rest:
    time.sleep(1.0)
    stream.abort()
while True:
    time.sleep(3600)
"""


def run_ns_and_wakeups(pid: int) -> tuple[int, int]:
    """Run nanoseconds and voluntary context switches of all of ``pid``'s threads now."""
    ns = wakeups = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            ns += int((task / "schedstat").read_text().split()[0])
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    wakeups += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return ns, wakeups


def measure(command: list[str], env: dict[str, str], seconds: float) -> dict[str, float]:
    """Start ``command``, let it settle, and take its threads' run time and wake-ups over ``seconds``."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(SETTLE_S)
        if process.poll() is not None:
            raise SystemExit(f"{command[0]} exited ({process.returncode}) before it was measured")
        ns, wakeups = run_ns_and_wakeups(process.pid)
        began = time.monotonic()
        time.sleep(seconds)
        ns_after, wakeups_after = run_ns_and_wakeups(process.pid)
        span = time.monotonic() - began
    finally:
        stop_process(process, STOP_TIMEOUT_S)
    return {
        "run_percent": round(100 * (ns_after - ns) / 1e9 / span, 3),
        "wakeups_per_s": round((wakeups_after - wakeups) / span, 1),
    }


def cases(args: argparse.Namespace) -> dict[str, list[str]]:
    frames = args.block_ms * ENGINE_RATE // 1000
    python = [sys.executable, "-c", PORTAUDIO_CHILD]
    pulse = ["--raw", "--format=float32le", f"--rate={ENGINE_RATE}", "--channels=1"]
    found = {
        "portaudio_mic": [*python, "mic", str(ENGINE_RATE), str(frames), "run"],
        "portaudio_speaker": [*python, "speaker", str(ENGINE_RATE), str(frames), "run"],
        "portaudio_speaker_rested": [*python, "speaker", str(ENGINE_RATE), str(frames), "rest"],
        "pulse_playback": [
            "pacat",
            *pulse,
            "--latency-msec=120",
            f"--process-time-msec={args.block_ms}",
            "/dev/zero",
        ],
    }
    for ms in args.record_ms:
        found[f"pulse_record_{ms}ms"] = ["parec", *pulse, f"--latency-msec={ms}"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="how long each case is measured")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every case, alternating")
    parser.add_argument("--block-ms", type=int, default=40, help="the streams' block (voice's own: 40)")
    parser.add_argument(
        "--record-ms",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[40, 400],
        help="parec's fragment sizes to try",
    )
    args = parser.parse_args()
    load_start = os.getloadavg()
    rows: dict[str, list[dict[str, float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="stream-floor-") as folder,
        private_pulse(Path(folder) / "pulse") as server,
    ):
        env = {**os.environ, "PULSE_SERVER": server}
        for round_ in range(args.rounds):
            for name, command in cases(args).items():
                print(f"round {round_ + 1}: {name}", file=sys.stderr, flush=True)
                rows.setdefault(name, []).append(measure(command, env, args.seconds))
    result: dict[str, Any] = {
        name: {
            "run_percent": round(statistics.median(row["run_percent"] for row in runs), 3),
            "wakeups_per_s": round(statistics.median(row["wakeups_per_s"] for row in runs), 1),
            "runs": runs,
        }
        for name, runs in rows.items()
    }
    result["block_ms"] = args.block_ms
    result["load_average"] = {
        "start": [round(x, 2) for x in load_start],
        "end": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
