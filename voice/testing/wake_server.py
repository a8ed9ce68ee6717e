"""The registry's wyoming-openwakeword on loopback, for the ``wyoming://`` wake word's tests and benchmark.

It pins wyoming==1.2.0 and a TFLite runtime built against numpy 1, so it cannot share voice's venv: it
gets its own in the user's cache (scripts/install.sh makes it; this makes it too when it is missing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from voice.testing.loopback import free_port, wait_for_port

PACKAGES = ("wyoming-openwakeword==1.8.2", "numpy<2")


def server_venv() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "voice" / "wyoming-openwakeword-1.8.2"


def ensure_server_venv() -> Path:
    """The server's own Python, its venv made and filled from the registry if it is not there yet."""
    venv = server_venv()
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    return python


@contextmanager
def wyoming_openwakeword(log: Path, *models: str) -> Iterator[str]:
    """A running wyoming-openwakeword with ``models`` loaded; yields its ``wyoming://`` URL."""
    python = ensure_server_venv()
    port = free_port()
    preload = [arg for model in models for arg in ("--preload-model", model)]
    command = [str(python), "-m", "wyoming_openwakeword", "--uri", f"tcp://127.0.0.1:{port}", *preload]
    with log.open("wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, server, log)
        yield f"wyoming://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
