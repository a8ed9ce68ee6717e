"""Loaded by a kiosk a watchdog test starts (PYTHONPATH): SIGUSR1 blocks its asyncio loop for
``VOICE_TEST_BLOCK_S`` seconds, as a hung call on the loop would. On no other process's path."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any

BLOCK_S = float(os.environ.get("VOICE_TEST_BLOCK_S", "0"))
_run_forever = asyncio.BaseEventLoop.run_forever


def _blockable_run_forever(loop: asyncio.BaseEventLoop) -> Any:
    if BLOCK_S > 0 and threading.current_thread() is threading.main_thread():  # the kiosk's loop
        loop.add_signal_handler(signal.SIGUSR1, time.sleep, BLOCK_S)  # the whole loop waits
    return _run_forever(loop)


asyncio.BaseEventLoop.run_forever = _blockable_run_forever  # type: ignore[method-assign,assignment]
