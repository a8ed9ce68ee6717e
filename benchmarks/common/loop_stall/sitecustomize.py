"""Loaded by the kiosk that kiosk_cut_in_load.py --stall-loop starts (PYTHONPATH): blocks its asyncio loop
for ``BENCH_STALL_S`` every ``BENCH_STALL_EVERY_S``, as a loop stalled under load does.

It lives in a folder of its own, on no other process's path: only that kiosk imports it.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

STALL_S = float(os.environ.get("BENCH_STALL_S", "0"))
EVERY_S = float(os.environ.get("BENCH_STALL_EVERY_S", "0"))
_run_forever = asyncio.BaseEventLoop.run_forever


def _stalling_run_forever(loop: asyncio.BaseEventLoop) -> Any:
    def stall() -> None:
        time.sleep(STALL_S)  # the whole loop waits, as it does behind the GIL or a slow call
        loop.call_later(EVERY_S, stall)

    if STALL_S > 0 and EVERY_S > 0:
        loop.call_later(EVERY_S, stall)
    return _run_forever(loop)


asyncio.BaseEventLoop.run_forever = _stalling_run_forever  # type: ignore[method-assign,assignment]
