"""A cancel token: once cancelled, always cancelled; shared by everyone working on one turn.

It is thread-safe (ASR, TTS and HTTP streaming run in worker threads) and wakes whatever waits on it:
threads via :meth:`CancelToken.wait`, asyncio tasks via :meth:`CancelToken.wait_async`, and anything else
through callbacks. A cancel wins a tie with completion: :meth:`CancelToken.finish` reports failure if a
cancel got there first, and a later cancel still overrides a finish (the reply streamed fully, but the
user cut its playback).
"""

from __future__ import annotations

import asyncio
import enum
import threading
from collections.abc import Callable

INTERRUPTED = "the user interrupted"
# A request sent before the end of the turn was certain, cut before anyone heard its reply.
DISCARDED = "the user went on: a preemptive request, unheard"
# A transcription the engine no longer needs (the user talked past an early offer, or a new conversation).
DROPPED = "the transcription is no longer needed"


class TokenState(enum.Enum):
    PENDING = "pending"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class CancelToken:
    """Monotonic cancel signal: PENDING → FINISHED → CANCELLED, or PENDING → CANCELLED; never back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._state = TokenState.PENDING
        self._reason = ""
        self._callbacks: list[Callable[[str], None]] = []

    @property
    def state(self) -> TokenState:
        return self._state

    @property
    def cancelled(self) -> bool:
        return self._state is TokenState.CANCELLED

    @property
    def reason(self) -> str:
        """Why it was cancelled ("" while not cancelled)."""
        return self._reason

    def cancel(self, reason: str = "cancelled") -> bool:
        """Cancel; returns True only for the call that actually cancelled (later calls are no-ops)."""
        with self._lock:
            if self._state is TokenState.CANCELLED:
                return False
            self._state = TokenState.CANCELLED
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
            self._event.set()
        for callback in callbacks:
            callback(reason)
        return True

    def finish(self) -> bool:
        """Mark the guarded work complete; False if a cancel already won (it then counts as cancelled)."""
        with self._lock:
            if self._state is TokenState.PENDING:
                self._state = TokenState.FINISHED
            return self._state is TokenState.FINISHED

    def on_cancel(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` once when cancelled (at once if already); returns an unsubscribe."""
        with self._lock:
            if self._state is not TokenState.CANCELLED:
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback(self._reason)
        return lambda: None

    def _remove(self, callback: Callable[[str], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def wait(self, timeout: float | None = None) -> bool:
        """Block the calling thread until cancelled or ``timeout`` passes; True if cancelled."""
        return self._event.wait(timeout)

    async def wait_async(self) -> str:
        """Wait in asyncio until cancelled (woken from any thread); returns the reason."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def settle(reason: str) -> None:
            if not future.done():
                future.set_result(reason)

        def wake(reason: str) -> None:
            loop.call_soon_threadsafe(settle, reason)

        unsubscribe = self.on_cancel(wake)
        try:
            return await future
        finally:
            unsubscribe()
