"""`voice chat` on a PulseAudio null sink, as systemd's user service runs it: READY=1 and watchdog pings on
the notify socket, its metrics and health on loopback, and `voice status` reading them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.notify_socket import NotifySocket
from tests.support.processes import read_until
from voice.telemetry.machine import this_cpu
from voice.testing.loopback import free_port

pytestmark = [pytest.mark.slow, pytest.mark.device, pytest.mark.models]


def test_chat_says_ready_pings_the_watchdog_and_serves_metrics_and_health(
    pulse_device: str, tmp_path: Path
) -> None:
    port = free_port()
    with NotifySocket(tmp_path / "notify") as notify:
        env = {**os.environ, "NOTIFY_SOCKET": str(notify.path), "WATCHDOG_USEC": "1500000"}
        command = [
            sys.executable, "-m", "voice", "chat", "--plain", "--seconds", "30", "--metrics-port", str(port),
            "--session", str(tmp_path / "chat.jsonl"),
            "--input-device", pulse_device, "--output-device", pulse_device,
        ]  # fmt: skip
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        ) as chat:
            assert chat.stdout is not None
            said = read_until(chat.stdout, "listening")
            ready = notify.wait_for("READY=1", 30)
            notify.wait_for("WATCHDOG=1", 10)
            scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
            health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30)
            shown = subprocess.run(
                [sys.executable, "-m", "voice", "status", "--port", str(port)],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            # the pings go on after the scrape, the probes and the status, three at least (the test may be
            # quicker than three ping intervals, so it waits for them rather than counting what came)
            pinged_after = notify.wait_for("WATCHDOG=1", 10, after=time.monotonic())
            third_ping = ready
            for _ in range(3):
                third_ping = notify.wait_for("WATCHDOG=1", 10, after=third_ping)
            pinged_after = max(pinged_after, third_ping)
            chat.terminate()
            chat.communicate(timeout=60)
        notify.wait_for("STOPPING=1", 10)
    assert "voice_turns_total" in scraped
    assert said[0] == f"cpu: {this_cpu().line()}\n"  # once, first: figures depend on it (`voice doctor`)
    assert f'model="{this_cpu().model}"' in scraped  # voice_cpu_info
    assert "voice_loop_stalls_total" in scraped  # the driver's counters
    assert health.status_code == 200, health.text  # the embedded llama.cpp server answers too
    assert health.json()["checks"]["audio"] == "ok"
    assert shown.returncode == 0, shown.stdout + shown.stderr
    pings = [at for at in notify.times("WATCHDOG=1") if ready < at <= pinged_after]
    assert len(pings) >= 3
    gaps = [later - earlier for earlier, later in zip([ready, *pings[:-1]], pings, strict=True)]
    assert max(gaps) < 1.5  # none missed twice
