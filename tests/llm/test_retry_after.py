"""The Retry-After hint is kept in either of its HTTP forms; nonsense is dropped rather than trusted."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from voice.llm.failures import parse_retry_after

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        ("1.5", 1.5),
        ("Sat, 01 Mar 2025 12:00:30 GMT", 30.0),
        ("Sat, 01 Mar 2025 11:59:00 GMT", 0.0),  # already past: retry now
        ("soon", None),
        ("nan", None),
    ],
)
def test_retry_after_in_seconds_or_as_a_date(value: str, seconds: float | None) -> None:
    assert parse_retry_after(httpx.Headers({"Retry-After": value}), NOW) == seconds


def test_no_header_no_hint() -> None:
    assert parse_retry_after(httpx.Headers(), NOW) is None
