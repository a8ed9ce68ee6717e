"""Servers started as processes on loopback: a free port for one, and waiting until it listens."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

READY_S = 120.0  # loading a model on a busy 2-core machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Return once ``port`` accepts; raise with the end of ``log`` if ``process`` exits first."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{process.args!r} did not listen on {port} in {READY_S:g} s")
