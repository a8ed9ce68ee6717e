"""Time on the room's sample clock for work that waits: the scripted model between its words, a scripted
tool while it runs, a retry's delay.

Each waiting job runs on its own thread, but only one of them runs at a time and the room waits for
it: a job runs until it waits on the clock or ends; the room wakes the jobs that are due one by one,
in due order, each until it waits again or ends (as trio's MockClock does for tasks). So a run is
deterministic. With ``realtime`` the same jobs wait on the wall clock instead and run freely.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

from voice.cancel import CancelToken


class _Waiter:
    def __init__(self) -> None:
        self.woken = False


class VirtualClock:
    """``now`` is a sample of the room's clock; jobs started with :meth:`start` may wait on it."""

    def __init__(self, rate: int, *, realtime: bool = False) -> None:
        self.rate = rate
        self.realtime = realtime
        self._now = 0
        self._started = time.monotonic()
        self._cond = threading.Condition()
        self._waiting: list[tuple[int, int, _Waiter]] = []  # (due sample, order, waiter)
        self._order = itertools.count()
        self._running = 0  # jobs started or woken that have not yet waited again or ended
        self._job = threading.local()  # ``running`` is set on the jobs' own threads

    @property
    def now(self) -> int:
        if self.realtime:
            return round((time.monotonic() - self._started) * self.rate)
        return self._now

    def start(self, job: Callable[[], None]) -> None:
        """Run ``job`` on its own thread; in virtual time, return once it waits on the clock or ends."""
        with self._cond:
            self._running += 1
        threading.Thread(target=self._run, args=(job,), name="voice-clocked", daemon=True).start()
        self._settle()

    def sleep_until(self, sample: int, cancel: CancelToken) -> bool:
        """From a job: wait until the clock reaches ``sample``; False if ``cancel`` fired first."""
        if self.realtime:
            return not cancel.wait(max(0.0, (sample - self.now) / self.rate))
        waiter = _Waiter()
        with self._cond:
            heapq.heappush(self._waiting, (sample, next(self._order), waiter))
            self._running -= 1
            self._cond.notify_all()
        unsubscribe = cancel.on_cancel(lambda _reason: self._wake(waiter))
        with self._cond:
            while not waiter.woken:
                self._cond.wait()
        unsubscribe()
        return not cancel.cancelled

    def advance(self, due_by: int, now: int, after_each: Callable[[], None]) -> None:
        """Wake every job due by ``due_by`` in due order, calling ``after_each`` after each has waited
        again or ended; the clock reads each job's due time while it runs, then ``now``."""
        self._settle()
        while True:
            with self._cond:
                if not self._waiting or self._waiting[0][0] > due_by:
                    break
                due, _, waiter = heapq.heappop(self._waiting)
                self._now = due
                waiter.woken = True
                self._running += 1
                self._cond.notify_all()
            self._settle()
            self._now = now
            after_each()
        self._now = now

    def _wake(self, waiter: _Waiter) -> None:
        """A cancelled job stops waiting at once. Cancelled from the room, the room waits until it has
        ended or waits again, so whatever it leaves reaches the engine at the same point every run."""
        with self._cond:
            if waiter.woken:
                return
            self._waiting = [entry for entry in self._waiting if entry[2] is not waiter]
            heapq.heapify(self._waiting)
            waiter.woken = True
            self._running += 1
            self._cond.notify_all()
        if not getattr(self._job, "running", False):  # a job settling would wait for itself
            self._settle()

    def _run(self, job: Callable[[], None]) -> None:
        self._job.running = True
        try:
            job()
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _settle(self) -> None:
        if self.realtime:
            return
        with self._cond:
            while self._running > 0:
                self._cond.wait()
