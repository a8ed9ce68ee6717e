"""The notify protocol: READY=1 after the first block, WATCHDOG=1 only while blocks are handled."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.notify_socket import NotifySocket
from voice.telemetry.heartbeat import Heartbeat
from voice.telemetry.watchdog import Notifier, Watchdog

INTERVAL_S = 0.05


def test_ready_waits_for_the_first_block_and_pings_stop_while_no_block_is_handled(tmp_path: Path) -> None:
    heartbeat = Heartbeat()
    with NotifySocket(tmp_path / "notify") as notify:
        watchdog = Watchdog(Notifier(str(notify.path)), heartbeat, INTERVAL_S)
        watchdog.start()
        time.sleep(0.3)
        assert notify.messages == []  # not listening yet
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            heartbeat.beat()
            time.sleep(0.01)
        stopped_beating = time.monotonic()
        time.sleep(0.5)
        watchdog.stop()
        notify.wait_for("STOPPING=1", 5)
    assert notify.times("READY=1")
    pings = notify.times("WATCHDOG=1")
    assert len([at for at in pings if at < stopped_beating]) >= 5
    assert [at for at in pings if at > stopped_beating + 2 * INTERVAL_S] == []


def test_only_systemd_asking_starts_a_watchdog() -> None:
    heartbeat = Heartbeat()
    assert Watchdog.from_environment(heartbeat, {}) is None
    asked = {"NOTIFY_SOCKET": "@voice-test", "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": str(os.getpid())}
    for environ, interval in (
        ({"NOTIFY_SOCKET": "@voice-test"}, None),  # Type=notify without WatchdogSec: READY=1 only
        (asked, 1.0),
        ({**asked, "WATCHDOG_PID": str(os.getpid() + 1)}, None),  # the watchdog is another process's
    ):
        watchdog = Watchdog.from_environment(heartbeat, environ)
        assert watchdog is not None
        assert watchdog.interval_s == interval
        watchdog.stop()


def test_a_missing_socket_is_no_error(tmp_path: Path) -> None:
    notifier = Notifier(str(tmp_path / "gone"))
    assert notifier.send("READY=1") is False
    notifier.close()


def test_blocks_handled_a_little_slower_than_the_pings_keep_them_coming(tmp_path: Path) -> None:
    """An idle loop's batched blocks, late on a busy machine, are no hang: systemd must not restart it."""
    heartbeat = Heartbeat()
    with NotifySocket(tmp_path / "notify") as notify:
        watchdog = Watchdog(Notifier(str(notify.path)), heartbeat, INTERVAL_S)
        watchdog.start()
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            heartbeat.beat()
            time.sleep(1.5 * INTERVAL_S)  # each block half an interval late
        watchdog.stop()
        notify.wait_for("STOPPING=1", 5)
    assert len(notify.times("WATCHDOG=1")) >= 15  # of about 20 intervals
