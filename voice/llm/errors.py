"""How an LLM call failed: a code, what the server may have done with the request, and whether to retry.

As docs/architecture.md §1 says: the *code* says what went wrong, the *dispatch* evidence how far the
request got (so a caller knows whether the server may have acted on it), and ``retriable`` says whether
another attempt may succeed. Messages are one line and never carry the API key, headers or the body.
"""

from __future__ import annotations

import enum

from voice.errors import VoiceError


class ErrorCode(enum.Enum):
    INVALID = "invalid"
    TRANSPORT = "transport"
    PROTOCOL = "protocol"
    UNAUTHORIZED = "unauthorized"
    RATE_LIMITED = "rate_limited"
    REFUSED = "refused"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"
    CANCELLED = "cancelled"
    DEADLINE = "deadline"
    UNAVAILABLE = "unavailable"


# Asking again cannot change these answers (docs/architecture.md §1), whatever the server or a caller marks.
NEVER_RETRIED = frozenset(
    {ErrorCode.UNAUTHORIZED, ErrorCode.REFUSED, ErrorCode.INVALID, ErrorCode.TOO_LARGE, ErrorCode.CANCELLED}
)


class Dispatch(enum.Enum):
    """How far the request got: the evidence a caller needs before sending it again."""

    NOT_SENT = "not_sent"  # it never left this machine
    REJECTED = "rejected"  # the server answered that it did not act on it
    UNKNOWN = "unknown"  # it may or may not have been processed
    ACCEPTED = "accepted"  # the server began answering it


class LLMError(VoiceError):
    """One failed LLM attempt; ``str()`` names the code first so a one-line report says what broke.

    ``retriable`` is the mark of the place that saw the failure, ignored for a code in ``NEVER_RETRIED``.
    """

    def __init__(
        self,
        code: ErrorCode,
        dispatch: Dispatch,
        detail: str,
        *,
        retriable: bool,
        retry_after_s: float | None = None,
    ) -> None:
        self.code = code
        self.dispatch = dispatch
        self.detail = detail
        self.retriable = retriable and code not in NEVER_RETRIED
        self.retry_after_s = retry_after_s
        super().__init__(self._describe())

    def _describe(self) -> str:
        facts = [self.dispatch.value, "retriable" if self.retriable else "not retriable"]
        if self.retry_after_s is not None:
            facts.append(f"retry after {self.retry_after_s:g} s")
        return f"LLM {self.code.value} ({', '.join(facts)}): {self.detail}"
