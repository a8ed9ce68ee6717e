"""The cancel token: final, idempotent, shared across threads, and it beats completion."""

from __future__ import annotations

import asyncio
import threading

from voice.cancel import CancelToken, TokenState


def test_only_the_first_cancel_counts_and_keeps_its_reason() -> None:
    token = CancelToken()

    assert token.cancel("user spoke")
    assert not token.cancel("timeout")
    assert token.cancelled
    assert token.reason == "user spoke"


def test_cancel_wins_a_tie_with_completion() -> None:
    token = CancelToken()
    token.cancel()

    assert not token.finish()
    assert token.state is TokenState.CANCELLED


def test_cancel_after_completion_still_cancels_the_turn() -> None:
    token = CancelToken()
    assert token.finish()

    assert token.cancel("playback cut")
    assert token.state is TokenState.CANCELLED


def test_of_many_threads_cancelling_at_once_exactly_one_wins() -> None:
    for _ in range(50):
        token = CancelToken()
        barrier = threading.Barrier(8)
        won: list[bool] = []

        def race(t: CancelToken = token, b: threading.Barrier = barrier, w: list[bool] = won) -> None:
            b.wait()
            w.append(t.cancel())

        threads = [threading.Thread(target=race) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert won.count(True) == 1


def test_cancel_wakes_a_waiting_thread() -> None:
    token = CancelToken()
    woke = threading.Event()
    waiter = threading.Thread(target=lambda: token.wait(10) and woke.set())
    waiter.start()

    token.cancel()
    waiter.join(5)

    assert woke.is_set()


def test_cancel_from_another_thread_wakes_an_asyncio_task() -> None:
    token = CancelToken()

    async def main() -> str:
        threading.Timer(0.01, token.cancel, args=("barge-in",)).start()
        return await asyncio.wait_for(token.wait_async(), 5)

    assert asyncio.run(main()) == "barge-in"


def test_callbacks_run_once_and_late_subscribers_run_at_once() -> None:
    token = CancelToken()
    calls: list[str] = []
    unsubscribe = token.on_cancel(lambda reason: calls.append("early:" + reason))
    removed = token.on_cancel(lambda reason: calls.append("removed"))
    removed()

    token.cancel("x")
    token.cancel("y")
    token.on_cancel(lambda reason: calls.append("late:" + reason))
    unsubscribe()

    assert calls == ["early:x", "late:x"]
