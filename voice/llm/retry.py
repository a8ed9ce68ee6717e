"""When the assistant tries an LLM request again (docs/architecture.md §1): only before anything was heard.

Once the user heard part of a reply, a second attempt would say it again differently, so the assistant
tells them briefly instead. A cancel is final, and so are the codes of ``NEVER_RETRIED`` whatever their
mark says. Pure: the caller sleeps and counts attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

from voice.llm.errors import NEVER_RETRIED, LLMError


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff that honours the server's Retry-After up to a cap.

    A Retry-After beyond ``max_retry_after_s`` means no retry: someone is waiting for an answer, and
    asking sooner than the server allows would only be rejected again.
    """

    max_retries: int = 2
    base_delay_s: float = 0.25
    max_delay_s: float = 2.0
    max_retry_after_s: float = 5.0

    def delay_before_retry(self, error: LLMError, attempt: int, heard_anything: bool) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1), or None to give up."""
        if error.code in NEVER_RETRIED or not error.retriable or heard_anything:
            return None
        if attempt > self.max_retries:
            return None
        if error.retry_after_s is not None:
            return error.retry_after_s if error.retry_after_s <= self.max_retry_after_s else None
        return min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
