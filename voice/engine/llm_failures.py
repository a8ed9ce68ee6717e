"""What a failed request to the language model leads to: another attempt at it, or the reply failing.

A context too large for the model, refused before the user heard anything, is trimmed once and tried
again at once; otherwise the retry policy decides (voice/llm/retry.py: never once part of the reply was
heard). Pure: the reply in flight carries out the decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from voice.llm.errors import ErrorCode, LLMError
from voice.llm.retry import RetryPolicy


@dataclass(frozen=True)
class TryAgain:
    """Send the request again after ``delay_s``; ``trim``: trim the history first (it overflowed)."""

    delay_s: float
    trim: bool = False


def after_failure(
    error: LLMError, *, attempt: int, trimmed: bool, heard: bool, policy: RetryPolicy
) -> TryAgain | None:
    """Another attempt after ``error`` ended attempt ``attempt``, or None: the reply fails.

    ``trimmed``: the request was trimmed once already; ``heard``: the user heard part of the reply.
    """
    if error.code is ErrorCode.TOO_LARGE and not trimmed and not heard:
        return TryAgain(0.0, trim=True)
    delay = policy.delay_before_retry(error, attempt, heard)
    return None if delay is None else TryAgain(delay)
