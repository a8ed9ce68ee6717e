"""The private PulseAudio (voice/audio/pulse.py) on a real pulseaudio."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.device

HOLDER = """
import sys, time
from pathlib import Path
from voice.audio.pulse import private_pulse
with private_pulse(Path(sys.argv[1])) as server:
    print(server, flush=True)
    time.sleep(60)
"""


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may never reap an orphan)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_the_private_pulseaudio_dies_when_its_process_is_killed_before_cleaning_up(
    tmp_path: Path, signum: signal.Signals
) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "pulse")],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().startswith(b"unix:"), "the private pulseaudio did not start"
            (server,) = children_of(holder.pid)
            assert running(server)
            holder.send_signal(signum)  # Python's default SIGTERM ends it without running the finally
            holder.wait(timeout=10)
            deadline = time.monotonic() + 10
            while running(server) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            holder.kill()  # a failed start must not wait out its sleep
        if running(server):
            os.kill(server, signal.SIGKILL)
            pytest.fail("pulseaudio outlived the process that started it")
