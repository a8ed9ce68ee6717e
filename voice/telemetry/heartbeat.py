"""When the engine loop last handled a mic block: the one sign that both the loop and the audio path live.

The loop beats once per block it handles (a plain store); the watchdog and the health check read it
from their own threads. A blocked loop, or a microphone that delivers nothing, stops the beats.
"""

from __future__ import annotations

import time


class Heartbeat:
    def __init__(self) -> None:
        self.last: float | None = None  # time.monotonic() of the last block handled; None before the first

    def beat(self) -> None:
        self.last = time.monotonic()

    def age_s(self) -> float | None:
        """Seconds since the last block handled, or None if none was yet."""
        last = self.last
        return None if last is None else time.monotonic() - last
