"""A private PulseAudio server with one null sink: a virtual speaker whose monitor is the microphone.

For headless machines (a kiosk being set up, CI, benchmarks): PortAudio reaches it through ALSA's pulse
plugin as the device "pulse" once ``PULSE_SERVER`` names the address this yields. The server dies with
the thread that started it, also when a SIGTERM or SIGKILL ends the process before its cleanup runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from voice.dying_child import dying_command
from voice.errors import DeviceError
from voice.process import stop_process

START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0

_COMMAND = [
    "pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no",
    "--load=module-null-sink", "--load=module-native-protocol-unix", "--log-target=stderr",
]  # fmt: skip


@contextmanager
def private_pulse(runtime: Path) -> Iterator[str]:
    """Run PulseAudio with its state in ``runtime`` until the block ends; yields its PULSE_SERVER address."""
    runtime.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime)}
    env.pop("PULSE_SERVER", None)
    socket = runtime / "pulse" / "native"
    log = runtime / "pulseaudio.log"
    if shutil.which(_COMMAND[0]) is None:  # the wrapper would only fail once started
        raise DeviceError("pulseaudio is not installed (apt-get install pulseaudio)")
    with log.open("wb") as log_file:
        server = subprocess.Popen(dying_command(_COMMAND), env=env, stdout=log_file, stderr=log_file)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not socket.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not socket.exists():
            tail = log.read_text(errors="replace")[-300:].replace("\n", " ")
            raise DeviceError(f"pulseaudio did not start: {tail}")
        yield f"unix:{socket}"
    finally:
        stop_process(server, STOP_TIMEOUT_S)
