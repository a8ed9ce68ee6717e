"""Processes the tests start: reading their output, finding and waiting for their children."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO


def read_until(lines: IO[str], wanted: str) -> list[str]:
    """Lines of ``voice chat`` up to the first containing ``wanted`` (the test's timeout bounds the wait)."""
    seen = []
    for line in lines:
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"{wanted!r} never came: {''.join(seen)}")


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan may wait a while to be reaped in a container)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def wait_until_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def servers_started_by(parent_pid: int) -> list[int]:
    """Live embedded-server launchers whose recorded parent is ``parent_pid``."""
    marker = f"voice.llm.server_child\0{parent_pid}\0".encode()
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes() and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue  # the process ended while we looked
    return found
