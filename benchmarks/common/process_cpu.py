"""A process's CPU as /proc counts it: clock ticks (sampled: a thread woken on a tick is charged all of it),
the scheduler's exact run time, and wake-ups, for the whole process and by thread."""

from __future__ import annotations

import os
from pathlib import Path

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


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


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds."""
    return cpu_ticks(Path(f"/proc/{pid}/stat")) / TICKS_PER_SECOND


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


def thread_run_ns(pid: int) -> dict[str, int]:
    """Scheduler run time of each thread of ``pid``, summed by thread name ("main" for the main thread)."""
    found: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            found[name] = found.get(name, 0) + int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found
