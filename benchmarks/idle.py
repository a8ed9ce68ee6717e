"""Listening idle: what the assistant costs while nobody talks (docs/architecture.md §5), and where it goes.

Modes (each prints one JSON object; progress goes to stderr), by what listens; benchmarks/README.md says
what each figure means:

- ``chat``: ``python -m voice chat`` (tiny.en, joe-medium, AEC, the embedded llama.cpp server) on a private
  PulseAudio null sink, sampled alone from /proc once it listens and has settled, while nothing plays: its
  CPU in % of one core (clock ticks in 1-second windows and over the listen; the scheduler's exact run time),
  by thread and by kind of thread with their wake-ups, its RSS and peak RSS, and ``bars_met``. With
  ``--scrape-interval S`` its metrics are served and fetched every S seconds, as Prometheus would.
  ``--against TREE`` alternates TREE's voice package and this one, ``--rounds`` times each, on the same
  sound server: on a shared machine only runs side by side in time compare.
- ``streams``: the sound streams by themselves, the floor under ``chat``: a PortAudio mic, speaker and rested
  speaker as voice/audio/devices.py opens them, and PulseAudio's own ``parec`` / ``pacat``, each in a
  process of its own, its threads' run time and wake-ups over ``--seconds``; ``--rounds`` alternate the
  cases, so that a busy machine weighs on all of them alike; the medians are reported.

Usage: python benchmarks/idle.py chat [--listen-seconds 30] [--settle-seconds 5] [--rounds 1]
       [--against TREE] [--scrape-interval S] [--wake-word NAME]   (about 1 minute a round)
       python benchmarks/idle.py streams [--seconds 15] [--rounds 3] [--block-ms 40] [--record-ms 40,400]
       (about ``rounds x cases x (seconds + 4)`` s)
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from common.harness import print_json, with_load
from common.process_cpu import TICKS_PER_SECOND, cpu_ticks, run_ns_and_wakeups, thread_ticks
from common.process_memory import status_kb
from common.scraper import Scraper

from voice.audio.block import ENGINE_RATE
from voice.audio.pulse import private_pulse
from voice.process import stop_process
from voice.testing.loopback import free_port

# --- chat: `voice chat` listening idle

BARS = {"cpu_percent_of_one_core": 5.0, "rss_mb": 600.0}
STARTUP_TIMEOUT_S = 120.0  # whisper, piper and the embedded LLM server load before "listening"
STOP_TIMEOUT_S = 15.0
BUSIEST_THREADS = 5


def forward_lines(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Copy the child's output to stderr as progress and to ``lines`` for the waiting thread."""
    for line in stream:
        print(f"  voice: {line.rstrip()}", file=sys.stderr, flush=True)
        lines.put(line)
    lines.put(None)


def wait_until_listening(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> float:
    """Seconds until ``voice chat`` says it is listening; exits if it dies or takes too long."""
    began = time.monotonic()
    while True:
        remaining = began + STARTUP_TIMEOUT_S - time.monotonic()
        try:
            line = lines.get(timeout=max(remaining, 0.01))
        except queue.Empty:
            raise SystemExit(f"voice chat did not start listening within {STARTUP_TIMEOUT_S:g} s") from None
        if line is None:
            raise SystemExit(f"voice chat exited ({process.wait()}) before listening")
        if line.startswith("listening"):
            return time.monotonic() - began


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of ``pid`` in MB."""
    return {
        "rss_mb": round((status_kb(pid, "VmRSS") or 0) / 1024, 1),
        "peak_rss_mb": round((status_kb(pid, "VmHWM") or 0) / 1024, 1),
    }


def sample_cpu(process: subprocess.Popen[str], seconds: int) -> dict[str, Any]:
    """CPU of ``process`` alone in % of one core: 1-second windows, the whole span and its threads."""
    stat = Path(f"/proc/{process.pid}/stat")
    threads_before = thread_ticks(process.pid)
    first_ticks, first_wall = cpu_ticks(stat), time.monotonic()
    windows = []
    ticks, wall = first_ticks, first_wall
    for _ in range(seconds):
        time.sleep(1.0)
        if process.poll() is not None:
            raise SystemExit(f"voice chat exited ({process.returncode}) while listening")
        now_ticks, now_wall = cpu_ticks(stat), time.monotonic()
        windows.append(100 * (now_ticks - ticks) / TICKS_PER_SECOND / (now_wall - wall))
        ticks, wall = now_ticks, now_wall
    span = wall - first_wall
    threads_after = thread_ticks(process.pid)
    by_thread = {
        thread: 100 * (after[0] - threads_before.get(thread, (0, 0, 0))[0]) / TICKS_PER_SECOND / span
        for thread, after in threads_after.items()
    }
    # a thread woken on a timer tick is charged that whole tick: the scheduler's own count is exact
    exact = {
        thread: 100 * (after[1] - threads_before.get(thread, (0, 0, 0))[1]) / 1e9 / span
        for thread, after in threads_after.items()
    }
    busiest = sorted(by_thread.items(), key=lambda item: -item[1])[:BUSIEST_THREADS]
    kinds: dict[str, dict[str, float]] = {}
    for thread, after in threads_after.items():
        kind = kinds.setdefault(
            thread.partition(" ")[2],
            {"threads": 0, "cpu_percent": 0.0, "run_percent": 0.0, "wakeups_per_s": 0.0},
        )
        kind["threads"] += 1
        kind["cpu_percent"] += by_thread[thread]
        kind["run_percent"] += exact[thread]
        kind["wakeups_per_s"] += (after[2] - threads_before.get(thread, (0, 0, 0))[2]) / span
    return {
        "cpu_percent_of_one_core": {
            "median_1s": round(statistics.median(windows), 2),
            "average": round(100 * (ticks - first_ticks) / TICKS_PER_SECOND / span, 2),
            "max_1s": round(max(windows), 2),
            "run_average": round(sum(exact.values()), 2),
        },
        "threads": len(threads_after),
        "busiest_threads": {thread: round(share, 2) for thread, share in busiest},
        "by_thread": {
            name: {key: round(value, 2) for key, value in kind.items()}
            for name, kind in sorted(kinds.items(), key=lambda item: -item[1]["cpu_percent"])
        },
    }


def measure(
    pulse_server: str,
    folder: Path,
    listen_s: int,
    settle_s: float,
    tree: Path | None = None,
    scrape_interval: float | None = None,
    wake_word: str | None = None,
) -> dict[str, Any]:
    """One ``voice chat`` listening idle; ``tree``'s voice package instead of this one's if given; its
    metrics served and scraped every ``scrape_interval`` seconds if given."""
    env = {**os.environ, "PULSE_SERVER": pulse_server}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    command = [
        sys.executable, "-m", "voice", "chat", "--input-device", "pulse", "--output-device", "pulse",
        "--seconds", str(round(settle_s + listen_s + 30)),
        "--session", str(folder / f"session-{time.monotonic_ns()}.jsonl"),
    ]  # fmt: skip
    port = free_port()
    if scrape_interval is not None:
        command += ["--metrics-port", str(port)]
    if wake_word is not None:  # asleep: the wake model hears the mic, the engine silence
        command += ["--wake-word", wake_word]
    process = subprocess.Popen(
        command,
        env=env,
        cwd=folder,  # `python -m` puts the working directory first on sys.path, before PYTHONPATH
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=forward_lines, args=(process.stdout, lines), daemon=True).start()
        startup_s = wait_until_listening(process, lines)
        print(f"listening after {startup_s:.1f} s; settling {settle_s:g} s", file=sys.stderr, flush=True)
        scraper = (
            None if scrape_interval is None else Scraper(f"http://127.0.0.1:{port}/metrics", scrape_interval)
        )
        time.sleep(settle_s)
        print(f"sampling {listen_s} s of idle listening", file=sys.stderr, flush=True)
        cpu = sample_cpu(process, listen_s)
        memory = memory_mb(process.pid)
        scrapes = (
            {} if scraper is None else {"scrapes": scraper.close(), "scrape_interval_s": scrape_interval}
        )
    finally:
        stop_process(process, STOP_TIMEOUT_S)
    return {
        "startup_s": round(startup_s, 1),
        "settle_s": settle_s,
        "listen_s": listen_s,
        **cpu,
        **memory,
        **scrapes,
    }


def with_bars(results: dict[str, Any]) -> dict[str, Any]:
    results["bars"] = BARS
    results["bars_met"] = {
        "cpu_percent_of_one_core": results["cpu_percent_of_one_core"]["average"]
        < BARS["cpu_percent_of_one_core"],
        "rss_mb": results["rss_mb"] < BARS["rss_mb"],
        "peak_rss_mb": results["peak_rss_mb"] < BARS["rss_mb"],
    }
    return results


def side_by_side(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The rounds of one tree: each run's average and main-thread share, and their medians."""
    averages = [run["cpu_percent_of_one_core"]["average"] for run in runs]
    mains = [run["by_thread"].get("main", {}).get("cpu_percent", 0.0) for run in runs]
    exact = [run["cpu_percent_of_one_core"]["run_average"] for run in runs]
    exact_mains = [run["by_thread"].get("main", {}).get("run_percent", 0.0) for run in runs]
    return {
        "average_cpu_percent": averages,
        "main_thread_cpu_percent": mains,
        "run_average_percent": exact,
        "main_thread_run_percent": exact_mains,
        "median_average": round(statistics.median(averages), 2),
        "median_main_thread": round(statistics.median(mains), 2),
        "median_run_average": round(statistics.median(exact), 2),
        "median_main_thread_run": round(statistics.median(exact_mains), 2),
        "runs": runs,
    }


def chat(args: argparse.Namespace) -> int:
    if args.against is not None and not (args.against / "voice" / "__init__.py").is_file():
        raise SystemExit(f"--against {args.against}: no voice package there")
    here = Path(__file__).resolve().parents[1]
    trees = [args.against, here] if args.against is not None else [here]
    runs: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory(prefix="voice-idle-") as name:
        folder = Path(name)
        (folder / "pulse-runtime").mkdir()
        with private_pulse(folder / "pulse-runtime") as pulse_server:
            for round_ in range(args.rounds):
                for tree in trees:
                    print(f"round {round_ + 1}: {tree}", file=sys.stderr, flush=True)
                    result = measure(
                        pulse_server,
                        folder,
                        args.listen_seconds,
                        args.settle_seconds,
                        tree,
                        args.scrape_interval,
                        args.wake_word,
                    )
                    runs[tree].append(with_bars(result))
    if args.against is None:
        print_json(runs[here][0] if args.rounds == 1 else side_by_side(runs[here]))
    else:
        before, after = side_by_side(runs[args.against]), side_by_side(runs[here])
        print_json({"before": {"tree": str(args.against), **before}, "after": after})
    return 0


# --- streams: the sound streams by themselves


STREAM_SETTLE_S = 3.0
STREAM_STOP_TIMEOUT_S = 5.0

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


def measure_stream(command: list[str], env: dict[str, str], seconds: float) -> dict[str, float]:
    """Start ``command``, let it settle, and take its threads' run time and wake-ups over ``seconds``."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(STREAM_SETTLE_S)
        if process.poll() is not None:
            raise SystemExit(f"{command[0]} exited ({process.returncode}) before it was measured")
        ns, wakeups = run_ns_and_wakeups(process.pid)
        began = time.monotonic()
        time.sleep(seconds)
        ns_after, wakeups_after = run_ns_and_wakeups(process.pid)
        span = time.monotonic() - began
    finally:
        stop_process(process, STREAM_STOP_TIMEOUT_S)
    return {
        "run_percent": round(100 * (ns_after - ns) / 1e9 / span, 3),
        "wakeups_per_s": round((wakeups_after - wakeups) / span, 1),
    }


def stream_cases(args: argparse.Namespace) -> dict[str, list[str]]:
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


def streams(args: argparse.Namespace) -> int:
    print_json(with_load(lambda: stream_floor(args)))
    return 0


def stream_floor(args: argparse.Namespace) -> dict[str, Any]:
    """Every stream case, ``args.rounds`` times alternating; the medians and each run."""
    rows: dict[str, list[dict[str, float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="stream-floor-") as folder,
        private_pulse(Path(folder) / "pulse") as server,
    ):
        env = {**os.environ, "PULSE_SERVER": server}
        for round_ in range(args.rounds):
            for name, command in stream_cases(args).items():
                print(f"round {round_ + 1}: {name}", file=sys.stderr, flush=True)
                rows.setdefault(name, []).append(measure_stream(command, env, args.seconds))
    result: dict[str, Any] = {
        name: {
            "run_percent": round(statistics.median(row["run_percent"] for row in runs), 3),
            "wakeups_per_s": round(statistics.median(row["wakeups_per_s"] for row in runs), 1),
            "runs": runs,
        }
        for name, runs in rows.items()
    }
    result["block_ms"] = args.block_ms
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    chat_mode = modes.add_parser("chat", help="`voice chat` listening idle")
    chat_mode.add_argument("--listen-seconds", type=int, default=30)
    chat_mode.add_argument("--settle-seconds", type=float, default=5.0)
    chat_mode.add_argument("--rounds", type=int, default=1, help="runs of each tree, alternating")
    chat_mode.add_argument("--against", type=Path, help="another source tree, run in turn with this one")
    chat_mode.add_argument("--wake-word", help="listen asleep behind this wake word (voice chat --wake-word)")
    chat_mode.add_argument(
        "--scrape-interval",
        type=float,
        help="serve metrics (--metrics-port) and fetch them every this many s",
    )
    chat_mode.set_defaults(command=chat)
    streams_mode = modes.add_parser("streams", help="the sound streams by themselves")
    streams_mode.add_argument("--seconds", type=float, default=15.0, help="how long each case is measured")
    streams_mode.add_argument("--rounds", type=int, default=3, help="runs of every case, alternating")
    streams_mode.add_argument("--block-ms", type=int, default=40, help="the streams' block (voice's own: 40)")
    streams_mode.add_argument(
        "--record-ms",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[40, 400],
        help="parec's fragment sizes to try",
    )
    streams_mode.set_defaults(command=streams)
    args = parser.parse_args()
    result: int = args.command(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
