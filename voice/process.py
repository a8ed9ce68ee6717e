"""Stopping a child process we started (the llama.cpp server, a private PulseAudio)."""

from __future__ import annotations

import subprocess
from typing import Any


def stop_process(process: subprocess.Popen[Any], timeout_s: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout_s``; reaps it either way."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
