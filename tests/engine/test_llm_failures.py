"""After a failed request to the model: a context too large is trimmed and tried once more at once, a
passing fault is tried again after a growing wait, and nothing is tried again once the user heard part
of the reply."""

from __future__ import annotations

from voice.engine.llm_failures import TryAgain, after_failure
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.retry import RetryPolicy

POLICY = RetryPolicy(max_retries=2, base_delay_s=0.25, max_delay_s=2.0)
TOO_LARGE = LLMError(ErrorCode.TOO_LARGE, Dispatch.REJECTED, "context_length_exceeded", retriable=False)
RESET = LLMError(ErrorCode.TRANSPORT, Dispatch.UNKNOWN, "connection reset", retriable=True)


def test_a_context_too_large_is_trimmed_and_sent_again_at_once_but_only_once() -> None:
    first = after_failure(TOO_LARGE, attempt=1, trimmed=False, heard=False, policy=POLICY)
    second = after_failure(TOO_LARGE, attempt=2, trimmed=True, heard=False, policy=POLICY)

    assert first == TryAgain(0.0, trim=True)
    assert second is None  # trimmed already: the reply fails


def test_a_context_too_large_after_part_of_the_reply_was_heard_fails_it() -> None:
    assert after_failure(TOO_LARGE, attempt=1, trimmed=False, heard=True, policy=POLICY) is None


def test_a_passing_fault_is_tried_again_after_a_growing_wait_until_the_policy_gives_up() -> None:
    waits = [after_failure(RESET, attempt=n, trimmed=False, heard=False, policy=POLICY) for n in (1, 2, 3)]

    assert waits == [TryAgain(0.25), TryAgain(0.5), None]


def test_nothing_is_tried_again_once_the_user_heard_part_of_the_reply() -> None:
    assert after_failure(RESET, attempt=1, trimmed=False, heard=True, policy=POLICY) is None
