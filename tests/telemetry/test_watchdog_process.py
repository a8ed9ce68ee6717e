"""A kiosk under a systemd-style notify socket: READY=1 once listening, WATCHDOG=1 while its loop runs."""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.kiosk import UNREACHABLE_LLM, running_kiosk
from tests.support.notify_socket import NotifySocket

pytestmark = [pytest.mark.slow, pytest.mark.processes, pytest.mark.realtime]

WATCHDOG_USEC = 900_000  # pings every 0.3 s
BLOCK_S = 3.0
LOOP_BLOCK = Path(__file__).resolve().parents[1] / "support" / "loop_block"


def test_watchdog_pings_come_while_the_loop_runs_and_stop_while_it_is_blocked(tmp_path: Path) -> None:
    with NotifySocket(tmp_path / "notify") as notify:
        env = {
            "NOTIFY_SOCKET": str(notify.path),
            "WATCHDOG_USEC": str(WATCHDOG_USEC),
            "VOICE_TEST_BLOCK_S": str(BLOCK_S),
            "PYTHONPATH": os.pathsep.join([str(LOOP_BLOCK), os.environ.get("PYTHONPATH", "")]),
        }
        with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM, env=env) as kiosk:
            ready = notify.wait_for("READY=1", 60)
            time.sleep(2.0)
            blocked_at = time.monotonic()
            kiosk.process.send_signal(signal.SIGUSR1)
            time.sleep(BLOCK_S + 2.0)
        stopping = notify.wait_for("STOPPING=1", 10)

    pings = notify.times("WATCHDOG=1")
    interval = WATCHDOG_USEC / 1e6 / 3
    before = [at for at in pings if ready < at < blocked_at]
    after = [at for at in pings if blocked_at + BLOCK_S < at < stopping]
    assert len(before) >= 4  # regular pings while it listens
    assert max(b - a for a, b in itertools.pairwise(before)) < 3 * interval
    during = [at for at in pings if blocked_at + interval * 1.5 < at < blocked_at + BLOCK_S - 0.1]
    assert during == []  # none while the loop could not handle a block
    assert len(after) >= 3  # and they come back with the loop
