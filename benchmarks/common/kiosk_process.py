"""A `voice kiosk` process under a benchmark: its output read on a thread (and the port it serves), its
memory, descriptors and model servers, what it said it closed, and its stop as a user's Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common.process_memory import status_kb

CLOSING = re.compile(r"voice kiosk: closing a client \((\d+)\): (.*)")


def rss_kb(pid: int) -> int | None:
    """The resident memory of ``pid`` in kB; None once it is gone."""
    return status_kb(pid, "VmRSS")


def fds(pid: int) -> int | None:
    """Open descriptors of ``pid``; None once it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def stop_kiosk(kiosk: subprocess.Popen[str]) -> int:
    """SIGTERM, as a user's Ctrl-C; killed if it has not exited 30 s later. Its exit code."""
    kiosk.send_signal(signal.SIGTERM)
    try:
        return kiosk.wait(timeout=30)
    except subprocess.TimeoutExpired:
        kiosk.kill()
        return kiosk.wait()


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started (the kiosk's model servers)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


class KioskOutput:
    """A kiosk's output read on a thread: each line with when it came, and the port it says it serves."""

    def __init__(self, kiosk: subprocess.Popen[str], ready_line: str | None = None) -> None:
        """Ready once the port is known, or once a line containing ``ready_line`` comes if given."""
        self.lines: list[tuple[float, str]] = []
        self._port: list[int] = []
        self._ready = threading.Event()
        self._ready_line = ready_line
        self._reader = threading.Thread(target=self._read, args=(kiosk,), daemon=True)
        self._reader.start()

    def _read(self, kiosk: subprocess.Popen[str]) -> None:
        assert kiosk.stdout is not None
        for line in kiosk.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))
            found = re.match(r"kiosk: http://[^ ]+:(\d+)/", line)
            if found:
                self._port.append(int(found.group(1)))
            if (found and self._ready_line is None) or (self._ready_line and self._ready_line in line):
                self._ready.set()
        self._ready.set()

    def port(self, timeout: float) -> int:
        """The port once ready; exits with what the kiosk said if it never served one."""
        self._ready.wait(timeout)
        if not self._port:
            raise SystemExit("voice kiosk did not start: " + " | ".join(line for _, line in self.lines))
        return self._port[0]

    def join(self) -> None:
        self._reader.join(5)


def kiosk_closes(lines: list[tuple[float, str]], started: float) -> dict[str, Any]:
    """What the kiosk said it closed, by code and reason, and when the first of each was."""
    closes: Counter[str] = Counter()
    first: dict[str, float] = {}
    for at, line in lines:
        found = CLOSING.search(line)
        if found:
            key = f"{found.group(1)} {found.group(2)}"
            closes[key] += 1
            first.setdefault(key, round(at - started, 1))
    return {"count": dict(closes), "first_at_s": first}
