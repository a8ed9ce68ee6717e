"""A process's memory over a long run: RSS, what glibc malloc holds, Python's allocations by line and live
objects by type, and native allocations in a window (memray), for the soaks to tell a warm-up that levels off
from growth that does not."""

from __future__ import annotations

import collections
import ctypes
import gc
import json
import statistics
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np


class MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2: what malloc holds, over all its arenas."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")
    ]  # fmt: skip


def malloc_mb() -> dict[str, float]:
    """glibc malloc in MB: in use, free but kept in the arenas' heaps, and in mmapped chunks.

    Free memory that grows while in-use memory does not is fragmentation, not a leak."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    mb = 1 << 20
    return {
        "in_use": round(info.uordblks / mb, 1),
        "free_in_heaps": round(info.fordblks / mb, 1),
        "mmapped": round(info.hblkhd / mb, 1),
        "python_blocks_k": round(sys.getallocatedblocks() / 1000, 1),
    }


def memory_summary(
    rss: list[list[float]], malloc: list[dict[str, float]], settle_s: float
) -> dict[str, float | None]:
    """RSS and malloc's in-use and kept memory once settled, at the end, and how much they grew between."""
    settled = [mb for at, mb in rss if at >= settle_s]
    after = [m for m in malloc if m["t_s"] >= settle_s]
    if not settled or not after:
        return {"rss_settled": None}
    return {
        "settle_s": settle_s,
        "rss_settled": settled[0],
        "rss_end": settled[-1],
        "rss_growth": settled[-1] - settled[0],
        "rss_median": statistics.median(settled),
        "rss_max": max(settled),
        "in_use_settled": after[0]["in_use"],
        "in_use_end": after[-1]["in_use"],
        "in_use_growth": round(after[-1]["in_use"] - after[0]["in_use"], 1),
        "free_in_heaps_median": statistics.median(m["free_in_heaps"] for m in after),
        "free_in_heaps_end": after[-1]["free_in_heaps"],
        "python_blocks_k_growth": round(after[-1]["python_blocks_k"] - after[0]["python_blocks_k"], 1),
    }


class PythonGrowth:
    """What grew in Python between a first tracemalloc snapshot and later ones, by line of the code that
    allocated it, and which kinds of live objects grew in number (a thread samples them as the soak runs)."""

    def __init__(
        self, scripts: tuple[str, ...], first_s: float, every_s: float, frames: int = 8, top: int = 15
    ) -> None:
        self._scripts = scripts  # the benchmark's own allocations (its rig's too) are no growth it measures
        self._first_s, self._every_s, self._frames, self._top = first_s, every_s, frames, top
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="python-growth", daemon=True)
        self.reports: list[dict[str, Any]] = []

    def start(self) -> None:
        tracemalloc.start(self._frames)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        tracemalloc.stop()

    def _run(self) -> None:
        began = time.monotonic()
        if self._stopped.wait(self._first_s):
            return
        first, first_types = self._snapshot(), object_counts()
        while not self._stopped.wait(self._every_s):
            diff = self._snapshot().compare_to(first, "traceback")
            types = object_counts()
            grown = sorted(((types[k] - first_types.get(k, 0), k) for k in types), reverse=True)[: self._top]
            report = {
                "t_s": round(time.monotonic() - began),
                "traced_mb": round(tracemalloc.get_traced_memory()[0] / (1 << 20), 1),
                "top": [
                    {
                        "kb": round(stat.size_diff / 1024, 1),
                        "count": stat.count_diff,
                        "where": [
                            f"{f.filename.split('/site-packages/')[-1]}:{f.lineno}" for f in stat.traceback
                        ][-8:],
                    }
                    for stat in diff[: self._top]
                ],
                "objects": {name: count for count, name in grown if count > 0},
            }
            self.reports.append(report)
            print(
                f"python growth at {report['t_s']} s: {json.dumps(report, indent=1)}",
                file=sys.stderr,
                flush=True,
            )

    def _snapshot(self) -> tracemalloc.Snapshot:
        return tracemalloc.take_snapshot().filter_traces(
            (
                tracemalloc.Filter(False, tracemalloc.__file__),
                tracemalloc.Filter(False, __file__),
                *(tracemalloc.Filter(False, script) for script in self._scripts),
            )
        )


class NativeWindow:
    """memray (not a dependency of voice: pip install memray) records every allocation, native ones with
    their C stacks, from ``first_s`` to ``last_s`` into ``path``; ``memray flamegraph --leaks`` then shows
    what was allocated in that window and never freed."""

    def __init__(self, path: Path, first_s: float, last_s: float) -> None:
        self._path, self._first_s, self._last_s = path, first_s, last_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="native-window", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        import memray

        if self._stopped.wait(self._first_s):
            return
        self._path.unlink(missing_ok=True)
        with memray.Tracker(self._path, native_traces=True):
            print(f"memray records into {self._path}", file=sys.stderr, flush=True)
            self._stopped.wait(self._last_s - self._first_s)
        print("memray stopped", file=sys.stderr, flush=True)


def object_counts() -> collections.Counter[str]:
    """Live objects the garbage collector tracks, by type."""
    return collections.Counter(type(o).__qualname__ for o in gc.get_objects())


def quiet_summary(quiet: list[list[float]], settle_s: float) -> dict[str, float | int | None]:
    """RSS taken while listening with nothing in flight, once settled: the line single samples swing around.

    A sample taken mid-transcription or mid-synthesis holds that call's buffers (up to about 130 MB)."""
    settled = [(at, mb) for at, mb in quiet if at >= settle_s]
    if len(settled) < 2:
        return {"samples": len(settled)}
    times = np.array([at for at, _ in settled]) / 60
    mbs = np.array([mb for _, mb in settled])
    slope = float(np.polyfit(times, mbs, 1)[0])  # MB a minute, least squares
    tenth = max(1, len(settled) // 10)
    return {
        "samples": len(settled),
        "settled": mbs[0].item(),
        "end": mbs[-1].item(),
        "growth": round((mbs[-1] - mbs[0]).item(), 1),
        "median_first_tenth": round(float(np.median(mbs[:tenth])), 1),
        "median_last_tenth": round(float(np.median(mbs[-tenth:])), 1),
        "least_squares_growth": round(slope * float(times[-1] - times[0]), 1),
        "min": mbs.min().item(),
        "max": mbs.max().item(),
    }


def status_kb(pid: int | str, key: str) -> int | None:
    """``key`` (VmRSS, VmHWM...) of process ``pid`` ("self": this one) in kB; None when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        name, _, rest = line.partition(":")
        if name == key:
            return int(rest.split()[0])
    return None


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of ``pid`` (this process by default) in MiB; NaN when it cannot be read."""
    kb = status_kb(pid, "VmRSS")
    return float("nan") if kb is None else kb / 1024
