"""The systemd notify protocol (sd_notify(3)) spoken directly: a datagram to ``$NOTIFY_SOCKET``.

``READY=1`` once the assistant handles its first mic block (it is listening), then ``WATCHDOG=1`` every
third of ``$WATCHDOG_USEC``, but only while the loop handled a block within two of those thirds: a loop
that blocks (or an audio path that stops delivering) stops the pings, and systemd restarts a hung
process, not only a dead one.
Without ``$NOTIFY_SOCKET`` (not under systemd) nothing runs.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping

from voice.telemetry.heartbeat import Heartbeat

READY_POLL_S = 0.1  # how soon after the first block READY=1 goes out


class Notifier:
    """Sends notify messages; a socket that is gone is ignored (systemd may be restarting)."""

    def __init__(self, address: str) -> None:
        # an address starting with @ is in the abstract namespace
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    def send(self, message: str) -> bool:
        try:
            self._socket.sendto(message.encode(), self._address)
        except OSError:
            return False
        return True

    def close(self) -> None:
        self._socket.close()


class Watchdog:
    """READY=1 on the first beat, then WATCHDOG=1 while the beats are fresh, on a thread of its own."""

    def __init__(self, notifier: Notifier, heartbeat: Heartbeat, interval_s: float | None) -> None:
        self._notifier = notifier
        self._heartbeat = heartbeat
        self.interval_s = interval_s  # None: READY=1 only, no watchdog configured
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="voice-watchdog", daemon=True)

    @classmethod
    def from_environment(
        cls, heartbeat: Heartbeat, environ: Mapping[str, str] = os.environ
    ) -> Watchdog | None:
        """The watchdog systemd asked for, or None when not started by systemd with Type=notify."""
        address = environ.get("NOTIFY_SOCKET")
        if not address:
            return None
        interval = None
        usec = environ.get("WATCHDOG_USEC", "")
        pid = environ.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            interval = int(usec) / 1e6 / 3
        return cls(Notifier(address), heartbeat, interval)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while self._heartbeat.last is None:
            if self._stopped.wait(READY_POLL_S):
                return
        self._notifier.send("READY=1\nSTATUS=listening")
        interval = self.interval_s
        if interval is None:
            return
        # fresh: a block handled within the timeout less one interval, so the loop's own 400 ms idle
        # batches, late on a busy machine, do not miss pings; a hung loop is still restarted within 5/3 of it
        fresh_s = 2 * interval
        while not self._stopped.wait(interval):
            age = self._heartbeat.age_s()
            if age is not None and age < fresh_s:
                self._notifier.send("WATCHDOG=1")

    def stop(self) -> None:
        """STOPPING=1, and no more pings."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()
        self._notifier.send("STOPPING=1")
        self._notifier.close()
