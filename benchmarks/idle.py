"""Listening-idle cost of the real assistant (`voice chat`), printed as JSON (docs/architecture.md §5).

Starts a private PulseAudio with a null sink, runs ``python -m voice chat`` on it (tiny.en, joe-medium,
AEC, the embedded llama.cpp server), waits for its "listening" line, lets it settle, then samples the
``voice chat`` process alone (not the LLM server it starts) while nothing plays:

- ``cpu_percent_of_one_core``: utime + stime from /proc/PID/stat, the median of 1-second windows and the
  average over the whole listen; ``busiest_threads`` splits the average by thread (/proc/PID/task), and
  ``by_thread`` by kind: ``main`` (the mic loop: echo path, VAD, engine), ``python`` (PortAudio's mic and
  speaker callbacks, workers), ``threaded-ml`` (libpulse), with each kind's wake-ups per second.
  ``cpu_percent`` counts clock ticks, which charge a whole tick to a thread woken on one; ``run_percent``
  (and ``run_average``) is the scheduler's exact run time from /proc/PID/task/TID/schedstat.
- ``rss_mb`` / ``peak_rss_mb``: VmRSS at the end of the listen and VmHWM (the peak since start).
- ``bars_met``: the average against < 5 % of one core; RSS and peak RSS against < 600 MB.
- With ``--scrape-interval S``, `voice chat` serves its metrics (``--metrics-port``) and they are fetched
  every S seconds while it listens, as Prometheus would (``scrapes``: how many, their median time).

Usage: python benchmarks/idle.py [--listen-seconds 30] [--settle-seconds 5] [--rounds 1] [--against TREE]
       [--scrape-interval S]
(about 1 minute a round). ``--against TREE`` alternates TREE's voice package and this one, ``--rounds`` times
each, on the same sound server: on a shared machine only runs side by side in time compare.
"""

from __future__ import annotations

import argparse
import json
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

from common.scraper import Scraper

from voice.audio.pulse import private_pulse
from voice.process import stop_process
from voice.testing.loopback import free_port

BARS = {"cpu_percent_of_one_core": 5.0, "rss_mb": 600.0}
STARTUP_TIMEOUT_S = 120.0  # whisper, piper and the embedded LLM server load before "listening"
STOP_TIMEOUT_S = 15.0
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
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


def wakeups(status_path: Path) -> int:
    """Voluntary context switches of a thread: the times it slept and was woken."""
    for line in status_path.read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def cpu_ticks(stat_path: Path) -> int:
    """utime + stime in clock ticks from a /proc stat file (fields 14 and 15; comm may hold spaces)."""
    fields = stat_path.read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def run_ns(schedstat_path: Path) -> int:
    """Nanoseconds a thread ran, as the scheduler counts them (exact, unlike sampled ticks)."""
    return int(schedstat_path.read_text().split()[0])


def thread_ticks(pid: int) -> dict[str, tuple[int, int, int]]:
    """CPU ticks, run nanoseconds and wake-ups of every live thread of ``pid``, keyed "tid name"."""
    ticks = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            ticks[f"{task.name} {name}"] = (
                cpu_ticks(task / "stat"),
                run_ns(task / "schedstat"),
                wakeups(task / "status"),
            )
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended between listing and reading
    return ticks


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of ``pid`` in MB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = round(int(rest.split()[0]) / 1024, 1)
    return {"rss_mb": values["VmRSS"], "peak_rss_mb": values["VmHWM"]}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen-seconds", type=int, default=30)
    parser.add_argument("--settle-seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each tree, alternating")
    parser.add_argument("--against", type=Path, help="another source tree, run in turn with this one")
    parser.add_argument(
        "--scrape-interval",
        type=float,
        help="serve metrics (--metrics-port) and fetch them every this many s",
    )
    args = parser.parse_args()
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
                    )
                    runs[tree].append(with_bars(result))
    if args.against is None and args.rounds == 1:
        print(json.dumps(runs[here][0], indent=2))
    elif args.against is None:
        print(json.dumps(side_by_side(runs[here]), indent=2))
    else:
        before, after = side_by_side(runs[args.against]), side_by_side(runs[here])
        print(json.dumps({"before": {"tree": str(args.against), **before}, "after": after}, indent=2))


if __name__ == "__main__":
    main()
