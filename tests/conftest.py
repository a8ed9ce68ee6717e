"""Fixtures shared across test folders: a private PulseAudio server for real-device tests."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest

from voice.audio.devices import rescan_devices


@pytest.fixture(scope="session")
def pulse_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start a private PulseAudio with one null sink; yields the PortAudio device name reaching it.

    PortAudio reaches PulseAudio through ALSA's pulse plugin; the null sink's monitor is the default
    source, so what the speaker plays comes back on the mic. Failing to start fails the test.
    """
    runtime = tmp_path_factory.mktemp("pulse")
    log = runtime / "pulseaudio.log"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime)}
    env.pop("PULSE_SERVER", None)
    command = [
        "pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no",
        "--load=module-null-sink", "--load=module-native-protocol-unix", "--log-target=stderr",
    ]  # fmt: skip
    socket = runtime / "pulse" / "native"
    try:
        with log.open("wb") as log_file:
            server = subprocess.Popen(command, env=env, stdout=log_file, stderr=log_file)
    except FileNotFoundError:
        pytest.fail("pulseaudio is not installed (apt-get install pulseaudio)")
    deadline = time.monotonic() + 15
    while not socket.exists() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not socket.exists():
        server.kill()
        server.wait()
        pytest.fail(f"pulseaudio did not start: {log.read_text(errors='replace')[-500:]}")
    previous = os.environ.get("PULSE_SERVER")
    os.environ["PULSE_SERVER"] = f"unix:{socket}"
    rescan_devices()
    try:
        yield "pulse"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if previous is None:
            del os.environ["PULSE_SERVER"]
        else:
            os.environ["PULSE_SERVER"] = previous
        rescan_devices()
