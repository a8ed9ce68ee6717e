"""Map what went wrong on the wire to an :class:`LLMError` (docs/architecture.md §1).

HTTP statuses: 429 → rejected and retriable (Retry-After kept), unless its code says the quota is
exhausted (refused); 408 and 5xx → unknown and retriable; 400/401/403 and other client errors →
rejected, never retried; 400 ``context_length_exceeded`` and 413 → too-large. ``x-should-retry`` is the
server's own mark: ``false`` makes nothing retriable, ``true`` cannot make a code of ``NEVER_RETRIED``
retriable. A body failing mid-stream → accepted and retriable. Messages name the URL (without
credentials) and the status, never headers or the request body.
"""

from __future__ import annotations

import email.utils
import enum
import json
from datetime import datetime

import httpx
from httpx_sse import SSEError

from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.reply import server_error_code


class RequestStage(enum.Enum):
    """Where the attempt was when it failed; it decides the dispatch evidence of transport errors."""

    REQUESTING = "requesting"  # connecting, sending, or waiting for the response head
    STREAMING = "streaming"  # the server answered 200 and the body was being read


_REFUSAL_CODES = frozenset({"content_filter", "content_policy_violation"})
# What OpenAI-style servers say when the account cannot pay for more, often in a 429 that is no rate limit.
QUOTA_CODES = frozenset(
    {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "quota_exceeded"}
)


def redact_url(url: httpx.URL) -> str:
    """The URL as shown in messages: no user info, no query string."""
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


def parse_retry_after(headers: httpx.Headers, now: datetime) -> float | None:
    """The Retry-After hint in seconds (delay-seconds or an HTTP date), or None if absent or unusable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - now).total_seconds()
    return max(0.0, seconds) if seconds == seconds else None  # NaN is not a delay


def status_error(response: httpx.Response, body: bytes, now: datetime) -> LLMError:
    """The error for a non-200 response; ``body`` is read only for the server's short error code."""
    status = response.status_code
    server_code = _server_code(body)
    code, dispatch, retriable = classify_status(status, server_code)
    should_retry = response.headers.get("x-should-retry", "").strip().lower()
    if should_retry in ("true", "false"):
        retriable = should_retry == "true"  # LLMError still refuses it for a code that cannot change
    detail = f"HTTP {status} {response.reason_phrase} from {redact_url(response.request.url)}".rstrip()
    if server_code:
        detail += f" [{server_code}]"
    hint = _QUOTA_HINT if server_code in QUOTA_CODES else _HINTS.get(code)
    if hint:
        detail += f"; {hint}"
    return LLMError(
        code, dispatch, detail, retriable=retriable, retry_after_s=parse_retry_after(response.headers, now)
    )


_HINTS = {
    ErrorCode.UNAUTHORIZED: "check VOICE_LLM_API_KEY",
    ErrorCode.INVALID: "check --llm-url and --llm-model",
    ErrorCode.TOO_LARGE: "the conversation is too long for this model",
}
_QUOTA_HINT = "the account's quota or billing limit is used up"


def _server_code(body: bytes) -> str | None:
    try:
        return server_error_code(json.loads(body))
    except (ValueError, UnicodeDecodeError):
        return None


def classify_status(status: int, server_code: str | None = None) -> tuple[ErrorCode, Dispatch, bool]:
    # The server's code first: a 429 for an empty account and a 400 for a long prompt are no rate limit
    # and no malformed request, and the caller must know to stop or to trim.
    if server_code in QUOTA_CODES or server_code in _REFUSAL_CODES:
        return ErrorCode.REFUSED, Dispatch.REJECTED, False
    if status == 413 or (server_code is not None and "context_length" in server_code):
        return ErrorCode.TOO_LARGE, Dispatch.REJECTED, False
    if status == 429:
        return ErrorCode.RATE_LIMITED, Dispatch.REJECTED, True
    if status in (401, 403):
        return ErrorCode.UNAUTHORIZED, Dispatch.REJECTED, False
    if status == 408:
        return ErrorCode.DEADLINE, Dispatch.UNKNOWN, True
    if status in (501, 505):
        # The server says it cannot do this at all; asking again cannot change that.
        return ErrorCode.UNSUPPORTED, Dispatch.REJECTED, False
    if status == 504:
        return ErrorCode.DEADLINE, Dispatch.UNKNOWN, True
    if 500 <= status < 600:
        return ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, True
    if 400 <= status < 500:
        return ErrorCode.INVALID, Dispatch.REJECTED, False
    return ErrorCode.PROTOCOL, Dispatch.UNKNOWN, False


def transport_error(
    exc: httpx.HTTPError, phase: RequestStage, url: httpx.URL, idle_timeout_s: float
) -> LLMError:
    """The error for an httpx failure (the caller chains ``exc`` with ``raise ... from``)."""
    where = redact_url(url)
    streaming = phase is RequestStage.STREAMING
    after_send = Dispatch.ACCEPTED if streaming else Dispatch.UNKNOWN
    if isinstance(exc, SSEError):  # before TransportError: httpx-sse derives from it
        content_type = exc.args[0].rpartition("got ")[2] if exc.args else "?"
        return LLMError(
            ErrorCode.PROTOCOL,
            Dispatch.ACCEPTED,
            f"{where} did not answer with an event stream (content type {content_type})",
            retriable=False,
        )
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return LLMError(
            ErrorCode.DEADLINE, Dispatch.NOT_SENT, f"no connection to {where} in time", retriable=True
        )
    if isinstance(exc, httpx.ConnectError):
        return LLMError(
            ErrorCode.TRANSPORT,
            Dispatch.NOT_SENT,
            f"cannot connect to {where}: {_reason(exc)}",
            retriable=True,
        )
    if isinstance(exc, httpx.ReadTimeout):
        what = "the reply stream went silent" if streaming else "no response"
        return LLMError(
            ErrorCode.DEADLINE, after_send, f"{what} for {idle_timeout_s:g} s from {where}", retriable=True
        )
    if isinstance(exc, httpx.WriteTimeout):
        return LLMError(ErrorCode.DEADLINE, Dispatch.UNKNOWN, f"sending to {where} stalled", retriable=True)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return LLMError(
            ErrorCode.INVALID, Dispatch.NOT_SENT, f"{where} is not an http(s) URL", retriable=False
        )
    if isinstance(exc, httpx.DecodingError):
        return LLMError(
            ErrorCode.PROTOCOL, Dispatch.ACCEPTED, f"undecodable body from {where}", retriable=False
        )
    if isinstance(exc, httpx.TransportError):
        what = "the reply stream broke" if streaming else "the request failed"
        return LLMError(
            ErrorCode.TRANSPORT, after_send, f"{what} ({_reason(exc)}) at {where}", retriable=True
        )
    return LLMError(
        ErrorCode.PROTOCOL, Dispatch.UNKNOWN, f"{type(exc).__name__} from {where}", retriable=False
    )


def _reason(exc: Exception) -> str:
    """The library's one-line reason (an OS error or an HTTP framing complaint), kept short."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:120]
