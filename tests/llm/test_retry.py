"""The assistant's retry policy (docs/architecture.md §1): only before anything was heard; a cancel never."""

from __future__ import annotations

import pytest

from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.retry import RetryPolicy

POLICY = RetryPolicy(max_retries=2, base_delay_s=0.25, max_delay_s=2.0, max_retry_after_s=5.0)


def error(
    code: ErrorCode = ErrorCode.UNAVAILABLE, *, retriable: bool = True, retry_after_s: float | None = None
) -> LLMError:
    return LLMError(code, Dispatch.UNKNOWN, "scripted", retriable=retriable, retry_after_s=retry_after_s)


def test_retriable_failure_before_anything_heard_is_retried_with_growing_delay() -> None:
    assert POLICY.delay_before_retry(error(), 1, heard_anything=False) == 0.25
    assert POLICY.delay_before_retry(error(), 2, heard_anything=False) == 0.5


def test_retries_are_bounded() -> None:
    assert POLICY.delay_before_retry(error(), 3, heard_anything=False) is None


def test_nothing_is_retried_once_something_was_heard() -> None:
    assert POLICY.delay_before_retry(error(), 1, heard_anything=True) is None


def test_a_failure_the_server_marked_final_is_not_retried() -> None:
    assert POLICY.delay_before_retry(error(retriable=False), 1, heard_anything=False) is None


def test_a_cancelled_turn_is_never_retried() -> None:
    assert POLICY.delay_before_retry(error(ErrorCode.CANCELLED), 1, heard_anything=False) is None


@pytest.mark.parametrize(("retry_after_s", "delay"), [(3.0, 3.0), (0.0, 0.0), (5.0, 5.0), (30.0, None)])
def test_retry_after_is_honoured_up_to_the_cap(retry_after_s: float, delay: float | None) -> None:
    rate_limited = error(ErrorCode.RATE_LIMITED, retry_after_s=retry_after_s)
    assert POLICY.delay_before_retry(rate_limited, 1, heard_anything=False) == delay


def test_the_backoff_never_exceeds_its_cap() -> None:
    patient = RetryPolicy(max_retries=10, base_delay_s=0.25, max_delay_s=2.0)
    assert patient.delay_before_retry(error(), 8, heard_anything=False) == 2.0


FINAL = [ErrorCode.UNAUTHORIZED, ErrorCode.REFUSED, ErrorCode.INVALID, ErrorCode.TOO_LARGE]
MAY_PASS = [
    ErrorCode.TRANSPORT,
    ErrorCode.PROTOCOL,
    ErrorCode.RATE_LIMITED,
    ErrorCode.UNSUPPORTED,
    ErrorCode.DEADLINE,
    ErrorCode.UNAVAILABLE,
]


@pytest.mark.parametrize("code", FINAL, ids=lambda code: code.value)
def test_no_retry_mark_makes_a_final_answer_retriable(code: ErrorCode) -> None:
    marked = LLMError(code, Dispatch.REJECTED, "scripted", retriable=True)
    assert not marked.retriable
    assert "not retriable" in str(marked)
    assert POLICY.delay_before_retry(marked, 1, heard_anything=False) is None


@pytest.mark.parametrize("code", FINAL, ids=lambda code: code.value)
def test_the_policy_refuses_a_final_answer_even_when_its_mark_was_changed(code: ErrorCode) -> None:
    marked = LLMError(code, Dispatch.REJECTED, "scripted", retriable=False)
    marked.retriable = True
    assert POLICY.delay_before_retry(marked, 1, heard_anything=False) is None


@pytest.mark.parametrize("code", MAY_PASS, ids=lambda code: code.value)
def test_a_failure_that_may_pass_is_retried_when_marked(code: ErrorCode) -> None:
    marked = error(code)
    assert marked.retriable
    assert POLICY.delay_before_retry(marked, 1, heard_anything=False) == 0.25
